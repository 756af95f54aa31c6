#pragma once
// Reads the per-chain status, height and coin supply the nodes write (/v1/ab).
#include <string>
#include <vector>

#include "db/database.h"

namespace connector::db {

struct ChainSupply {
  std::string slug, network, chain_id, base_chain;
  std::string status;
  std::string latest_height;
  std::string name, symbol;  // of the chain's native coin
  int decimals = 18;
  std::string supply;  // canonical base units
};

std::vector<ChainSupply> load_chain_supply(Database& db);

}  // namespace connector::db
