// Chains and assets, kept in memory and reloaded every second (they change rarely and every
// history record names them), with the networks answer rendered once per load.
export class Reference {
  constructor(pool, refreshMs = 1000) {
    this.pool = pool;
    this.refreshMs = refreshMs;
    this.chains = [];
    this.chainById = new Map();
    this.chainBySlug = new Map();
    this.assetById = new Map();
    this.networksBody = '{"networks":[]}';
  }

  async load() {
    const [chains] = await this.pool.query(
      'SELECT id, slug, network, chain_id, base_chain FROM chains ORDER BY id');
    const [assets] = await this.pool.query(
      'SELECT id, chain_ref, address, name, symbol, decimals, asset_type FROM assets ORDER BY id');
    this.chains = chains;
    this.chainById = new Map(chains.map((c) => [c.id, c]));
    this.chainBySlug = new Map(chains.map((c) => [c.slug, c]));
    this.assetById = new Map(assets.map((a) => [String(a.id), a]));
    this.networksBody = JSON.stringify({
      networks: chains.map((c) => ({
        network: c.network, chain_id: String(c.chain_id), base_chain: c.base_chain, slug: c.slug,
      })),
    });
  }

  // Reloads in the background; a failed reload keeps the last data.
  start() {
    const timer = setInterval(() => {
      this.load().catch((err) => console.error(`peer: reference reload failed: ${err.message}`));
    }, this.refreshMs);
    timer.unref();
  }

  // A record that names a chain or asset loaded after the last reload: load now.
  async covering(rows) {
    const covered = (r) => this.chainById.has(r.source_chain) &&
      this.chainById.has(r.destination_chain) && this.assetById.has(String(r.source_asset_id)) &&
      this.assetById.has(String(r.destination_asset_id));
    if (!rows.every(covered)) {
      await this.load();
      if (!rows.every(covered)) throw new Error('a history record names unknown reference data');
    }
  }

  slugList() {
    return this.chains.map((c) => c.slug).join(', ');
  }
}
