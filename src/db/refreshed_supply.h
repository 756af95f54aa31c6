#pragma once
// Reads the per-chain status, height and coin supply the nodes write (/v1/ab), and keeps a
// refreshed copy of them (db/refreshed.h) for the threads of a worker process.
#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "db/connection.h"
#include "db/refreshed.h"
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

// Status and supply, reloaded by the refresher like the reference data, but live
// data: served at most two refresh intervals old (at least one second, so that a 50 ms interval
// does not flap), so a database outage becomes a 503 after that (while nginx's cache may still
// answer with its own stale copy).
class RefreshedSupply {
 public:
  explicit RefreshedSupply(std::chrono::milliseconds refresh_interval)
      : chains_("chain supply", std::max<std::chrono::milliseconds>(2 * refresh_interval,
                                                                    std::chrono::seconds(1))) {}

  std::shared_ptr<const std::vector<ChainSupply>> get() const { return chains_.get(); }
  // Loads it now through db: the refresher's reload. Returns when it was stored.
  std::chrono::steady_clock::time_point load(Connection& db) {
    return chains_.store(load_chain_supply(db));
  }
  void store(std::vector<ChainSupply> chains) { chains_.store(std::move(chains)); }

 private:
  Refreshed<std::vector<ChainSupply>> chains_;
};

}  // namespace connector::db
