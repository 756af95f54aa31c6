#include "db/refreshed_reference.h"

#include "db/statement.h"
#include "metrics/scoreboard.h"

namespace connector::db {
namespace {

using domain::Asset;
using domain::Chain;
using domain::Connect;
using domain::Pair;
using domain::ReferenceData;

constexpr Column<Chain> kChainColumns[] = {
    field<&Chain::ref>("id"),
    field<&Chain::slug>("slug"),
    field<&Chain::network>("network"),
    field<&Chain::chain_id>("chain_id"),
    field<&Chain::base_chain>("base_chain"),
    {"deposit_factory",
     [](sql::ResultSet& rs, int column, Chain& chain) {
       chain.deposit_factory = chain::Address::parse(read_value<std::string>(rs, column));
     }},
    {"deposit_init_code_hash",
     [](sql::ResultSet& rs, int column, Chain& chain) {
       chain.deposit_init_code_hash = chain::parse_hash32(read_value<std::string>(rs, column));
     }},
};

constexpr Column<Asset> kAssetColumns[] = {
    field<&Asset::id>("id"),
    field<&Asset::chain_ref>("chain_ref"),
    field<&Asset::address>("address"),
    field<&Asset::name>("name"),
    field<&Asset::symbol>("symbol"),
    field<&Asset::decimals>("decimals"),
    field<&Asset::asset_type>("asset_type"),
};

constexpr Column<Connect> kConnectColumns[] = {
    field<&Connect::chain_a>("chain_a"),
    field<&Connect::chain_b>("chain_b"),
};

// The settings of a direction are columns prefixed a2b_ or b2a_.
template <domain::DirectionSettings Pair::*Direction>
constexpr std::array<Column<Pair>, 5> direction_columns(std::string_view min_deposit,
                                                        std::string_view fee_percent,
                                                        std::string_view fee_min,
                                                        std::string_view auto_confirm,
                                                        std::string_view disabled) {
  return {{
      {min_deposit,
       [](sql::ResultSet& rs, int c, Pair& p) {
         (p.*Direction).min_deposit_amount = read_value<std::string>(rs, c);
       }},
      {fee_percent,
       [](sql::ResultSet& rs, int c, Pair& p) {
         (p.*Direction).fee_percent_millionths = read_value<std::uint64_t>(rs, c);
       }},
      {fee_min, [](sql::ResultSet& rs, int c,
                   Pair& p) { (p.*Direction).fee_min_amount = read_value<std::string>(rs, c); }},
      {auto_confirm,
       [](sql::ResultSet& rs, int c, Pair& p) {
         (p.*Direction).auto_confirm_deposit_amount = read_value<std::string>(rs, c);
       }},
      {disabled, [](sql::ResultSet& rs, int c,
                    Pair& p) { (p.*Direction).disabled = read_value<bool>(rs, c); }},
  }};
}

const std::vector<Column<Pair>>& pair_columns() {
  static const std::vector<Column<Pair>> columns = [] {
    std::vector<Column<Pair>> all = {field<&Pair::id>("id"), field<&Pair::asset_a_id>("asset_a_id"),
                                     field<&Pair::asset_b_id>("asset_b_id")};
    for (const auto& c : direction_columns<&Pair::a2b>(
             "a2b_min_deposit_amount", "a2b_fee_percent_millionths", "a2b_fee_min_amount",
             "a2b_auto_confirm_deposit_amount", "a2b_disabled")) {
      all.push_back(c);
    }
    for (const auto& c : direction_columns<&Pair::b2a>(
             "b2a_min_deposit_amount", "b2a_fee_percent_millionths", "b2a_fee_min_amount",
             "b2a_auto_confirm_deposit_amount", "b2a_disabled")) {
      all.push_back(c);
    }
    return all;
  }();
  return columns;
}

// Every row of a reference table in id order, through its column table.
template <typename Row>
std::string table_statement(std::string_view table, std::span<const Column<Row>> columns) {
  return "SELECT " + select_list(columns) + " FROM " + std::string(table) + " ORDER BY id";
}

struct TableStatements {
  std::string chains, assets, connects, pairs;
};

const TableStatements& table_statements() {
  static const TableStatements statements{
      table_statement<Chain>("chains", kChainColumns),
      table_statement<Asset>("assets", kAssetColumns),
      table_statement<Connect>("connects", kConnectColumns),
      table_statement<Pair>("pairs", pair_columns()),
  };
  return statements;
}

}  // namespace

ReferenceData load_reference_data(Connection& db) {
  return db.run([](Connection& session) {
    const auto& statements = table_statements();
    ReferenceData data;
    data.chains = session.rows<Chain>(statements.chains, {}, kChainColumns);
    data.assets = session.rows<Asset>(statements.assets, {}, kAssetColumns);
    data.connects = session.rows<Connect>(statements.connects, {}, kConnectColumns);
    data.pairs = session.rows<Pair>(statements.pairs, {}, pair_columns());
    return data;
  });
}

std::vector<std::string> reference_statements() {
  const auto& statements = table_statements();
  return {statements.chains, statements.assets, statements.connects, statements.pairs};
}

std::chrono::steady_clock::time_point RefreshedReference::load(Connection& db) {
  const auto stored_at = data_.store(load_reference_data(db));
  metrics::increment(&metrics::Scoreboard::reference_reloads);
  return stored_at;
}

std::shared_ptr<const domain::ReferenceData> RefreshedReference::covering(
    std::shared_ptr<const domain::ReferenceData> data,
    std::span<const domain::HistoryRecord> records,
    std::chrono::steady_clock::time_point deadline) {
  auto covered = [&records](const domain::ReferenceData& reference) {
    return std::all_of(records.begin(), records.end(),
                       [&](const auto& record) { return reference.covers(record); });
  };
  const auto until = std::min(deadline, std::chrono::steady_clock::now() + newer_wait());
  while (!covered(*data)) {
    auto newer = newer_than(data, until);
    if (newer == data) {
      throw DatabaseUnavailable("a history record names reference data not loaded yet");
    }
    data = std::move(newer);
  }
  return data;
}

}  // namespace connector::db
