#include "db/reference_store.h"

#include <cppconn/prepared_statement.h>

#include "db/rows.h"
#include "metrics/scoreboard.h"

namespace connector::db {
namespace {

using domain::ReferenceData;

std::unique_ptr<sql::ResultSet> query(Database& db, const std::string& sql_text) {
  return std::unique_ptr<sql::ResultSet>(db.prepare(sql_text).executeQuery());
}

void load_chains(Database& db, ReferenceData& data) {
  auto rs = query(db,
                  "SELECT id, slug, network, chain_id, base_chain, deposit_factory, "
                  "deposit_init_code_hash FROM chains ORDER BY id");
  while (rs->next()) {
    domain::Chain chain;
    chain.ref = static_cast<std::uint16_t>(u64(*rs, 1));
    chain.slug = text(*rs, 2);
    chain.network = text(*rs, 3);
    chain.chain_id = u64(*rs, 4);
    chain.base_chain = text(*rs, 5);
    chain.deposit_factory = chain::Address::parse(text(*rs, 6));
    chain.deposit_init_code_hash = chain::parse_hash32(text(*rs, 7));
    data.chains.push_back(std::move(chain));
  }
}

void load_assets(Database& db, ReferenceData& data) {
  auto rs = query(db,
                  "SELECT id, chain_ref, address, name, symbol, decimals, asset_type "
                  "FROM assets ORDER BY id");
  while (rs->next()) {
    data.assets.push_back({u64(*rs, 1), static_cast<std::uint16_t>(u64(*rs, 2)), text(*rs, 3),
                           text(*rs, 4), text(*rs, 5), static_cast<int>(u64(*rs, 6)),
                           text(*rs, 7)});
  }
}

void load_connects(Database& db, ReferenceData& data) {
  auto rs = query(db, "SELECT chain_a, chain_b FROM connects ORDER BY id");
  while (rs->next()) {
    data.connects.push_back(
        {static_cast<std::uint16_t>(u64(*rs, 1)), static_cast<std::uint16_t>(u64(*rs, 2))});
  }
}

domain::DirectionSettings direction(sql::ResultSet& rs, int first_column) {
  return {text(rs, first_column), u64(rs, first_column + 1), text(rs, first_column + 2),
          text(rs, first_column + 3), rs.getBoolean(first_column + 4)};
}

void load_pairs(Database& db, ReferenceData& data) {
  auto rs = query(db,
                  "SELECT id, asset_a_id, asset_b_id, "
                  "a2b_min_deposit_amount, a2b_fee_percent_millionths, a2b_fee_min_amount, "
                  "a2b_auto_confirm_deposit_amount, a2b_disabled, "
                  "b2a_min_deposit_amount, b2a_fee_percent_millionths, b2a_fee_min_amount, "
                  "b2a_auto_confirm_deposit_amount, b2a_disabled "
                  "FROM pairs ORDER BY id");
  while (rs->next()) {
    data.pairs.push_back(
        {u64(*rs, 1), u64(*rs, 2), u64(*rs, 3), direction(*rs, 4), direction(*rs, 9)});
  }
}

}  // namespace

ReferenceData load_reference_data(Database& db) {
  return db.run([](Database& session) {
    ReferenceData data;
    load_chains(session, data);
    load_assets(session, data);
    load_connects(session, data);
    load_pairs(session, data);
    return data;
  });
}

namespace {

domain::ReferenceData load_counted(Database& db) {
  auto data = load_reference_data(db);
  metrics::increment(&metrics::Scoreboard::reference_reloads);
  return data;
}

}  // namespace

std::shared_ptr<const domain::ReferenceData> ReferenceCache::get(Database& db) {
  return snapshot_.get([&db] { return load_counted(db); });
}

std::shared_ptr<const domain::ReferenceData> ReferenceCache::refresh(Database& db) {
  return snapshot_.refresh([&db] { return load_counted(db); });
}

}  // namespace connector::db
