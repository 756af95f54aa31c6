#include "db/supply_store.h"

#include <cppconn/prepared_statement.h>

#include "db/rows.h"

namespace connector::db {

std::vector<ChainSupply> load_chain_supply(Database& db) {
  return db.run([](Database& session) {
    // The coin's name and decimals come from the chain's native asset when one is recorded.
    auto& stmt = session.prepare(
        "SELECT c.slug, c.network, c.chain_id, c.base_chain, s.status, s.latest_height, "
        "COALESCE(a.name, 'UNIT'), COALESCE(a.symbol, 'UNIT'), COALESCE(a.decimals, 18), "
        "s.supply "
        "FROM chain_status s JOIN chains c ON c.id = s.chain_ref "
        "LEFT JOIN assets a ON a.chain_ref = c.id AND a.asset_type = 'Coin' "
        "ORDER BY c.id");
    std::unique_ptr<sql::ResultSet> rs(stmt.executeQuery());
    std::vector<ChainSupply> chains;
    while (rs->next()) {
      chains.push_back({text(*rs, 1), text(*rs, 2), text(*rs, 3), text(*rs, 4), text(*rs, 5),
                        text(*rs, 6), text(*rs, 7), text(*rs, 8), static_cast<int>(u64(*rs, 9)),
                        text(*rs, 10)});
    }
    return chains;
  });
}

}  // namespace connector::db
