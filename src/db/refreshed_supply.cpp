#include "db/refreshed_supply.h"

#include "db/statement.h"

namespace connector::db {

namespace {

constexpr Column<ChainSupply> kSupplyColumns[] = {
    field<&ChainSupply::slug>("c.slug"),
    field<&ChainSupply::network>("c.network"),
    field<&ChainSupply::chain_id>("c.chain_id"),
    field<&ChainSupply::base_chain>("c.base_chain"),
    field<&ChainSupply::status>("s.status + 0"),
    field<&ChainSupply::latest_height>("s.latest_height"),
    // The coin's name and decimals come from the chain's native asset when one is recorded.
    field<&ChainSupply::name>("COALESCE(a.name, 'UNIT')"),
    field<&ChainSupply::symbol>("COALESCE(a.symbol, 'UNIT')"),
    field<&ChainSupply::decimals>("COALESCE(a.decimals, 18)"),
    field<&ChainSupply::supply>("s.supply"),
};

}  // namespace

const std::string& supply_statement() {
  static const std::string statement =
      "SELECT " + select_list<ChainSupply>(kSupplyColumns) +
      " FROM chain_status s JOIN chains c ON c.id = s.chain_ref "
      "LEFT JOIN assets a ON a.chain_ref = c.id AND a.asset_type = 'Coin' "
      "ORDER BY c.id";
  return statement;
}

std::vector<ChainSupply> load_chain_supply(Connection& db) {
  return db.run([](Connection& session) {
    return session.rows<ChainSupply>(supply_statement(), {}, kSupplyColumns);
  });
}

}  // namespace connector::db
