#pragma once
// Reads the per-chain status, height and coin supply the nodes write (/v1/ab), and keeps them
// in memory for the threads of a worker process.
#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "db/connection.h"
#include "db/snapshot.h"
#include "domain/chain_status.h"

namespace connector::db {

struct ChainSupply {
  std::string slug, network, chain_id, base_chain;
  domain::ChainStatus status = domain::ChainStatus::kOk;
  std::string latest_height;
  std::string name, symbol;  // of the chain's native coin
  int decimals = 18;
  std::string supply;  // canonical base units
};

std::vector<ChainSupply> load_chain_supply(Connection& db);
// The statement it runs (db/statement_set.h).
const std::string& supply_statement();

// Status and supply, reloaded by the snapshot refresher like the reference data, but live
// data: served at most two refresh intervals old (at least one second, so that a 50 ms interval
// does not flap), so a database outage becomes a 503 after that (while nginx's cache may still
// answer with its own stale copy).
class SupplyCache {
 public:
  explicit SupplyCache(std::chrono::milliseconds refresh_interval)
      : snapshot_("chain supply", std::max<std::chrono::milliseconds>(2 * refresh_interval,
                                                                      std::chrono::seconds(1))) {}

  std::shared_ptr<const std::vector<ChainSupply>> get() const { return snapshot_.get(); }
  // Loads it now through db: the refresher's reload. Returns when it was stored.
  std::chrono::steady_clock::time_point load(Connection& db) {
    return snapshot_.store(load_chain_supply(db));
  }
  void store(std::vector<ChainSupply> chains) { snapshot_.store(std::move(chains)); }

 private:
  Snapshot<std::vector<ChainSupply>> snapshot_;
};

}  // namespace connector::db
