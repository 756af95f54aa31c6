// Typed writes (db/write_statement.h) and connector-admin's tables (admin/write_tables.h): the
// statement text a table makes, and the values it binds for a row, in placeholder order.
#define BOOST_TEST_MODULE write_statement
#include <boost/test/unit_test.hpp>

#include <ostream>
#include <string>
#include <variant>

#include "admin/write_tables.h"
#include "db/write_statement.h"
#include "domain/history.h"

using connector::admin::ChainRefs;
using connector::admin::HistoryRow;
using connector::db::bind;
using connector::db::bind_or_null;
using connector::db::insert_sql;
using connector::db::insert_where_sql;
using connector::db::OnDuplicate;
using connector::db::Param;
using connector::db::Params;
using connector::db::params_of;
using connector::db::WriteColumn;
using connector::db::WriteTable;
using connector::domain::HistoryStatus;

namespace {

// A parameter as the test spells it: NULL, 'text' or a number.
std::string shown(const Param& p) {
  if (std::holds_alternative<std::monostate>(p)) return "NULL";
  if (const auto* text = std::get_if<std::string>(&p)) return "'" + *text + "'";
  return std::to_string(std::get<std::uint64_t>(p));
}

std::string shown(const Params& params) {
  std::string out;
  for (const auto& p : params) out += (out.empty() ? "" : " ") + shown(p);
  return out;
}

struct Limits {
  std::uint64_t most = 0;
  bool on = false;
};

struct Sample {
  std::uint64_t id = 0;
  std::string name, note;
  int level = 0;
  HistoryStatus status = HistoryStatus::kDeposit;
  Limits limits;
};

constexpr WriteColumn<Sample> kSampleColumns[] = {
    bind<&Sample::id>("id"),
    bind<&Sample::name>("name"),
    bind_or_null<&Sample::note>("note"),
    bind<&Sample::level>("level"),
    bind<&Sample::status>("status"),
    bind<&Sample::limits, &Limits::most>("limits_most"),
    bind<&Sample::limits, &Limits::on>("limits_on"),
};
constexpr WriteTable<Sample> kSampleTable{"samples", kSampleColumns, 2};

}  // namespace

BOOST_AUTO_TEST_CASE(insert_text_comes_from_the_table) {
  BOOST_TEST(insert_sql(kSampleTable, 1, OnDuplicate::kFail) ==
             "INSERT INTO samples (id, name, note, level, status, limits_most, limits_on) "
             "VALUES (?, ?, ?, ?, ?, ?, ?)");
  BOOST_TEST(insert_sql(kSampleTable, 2, OnDuplicate::kIgnore) ==
             "INSERT IGNORE INTO samples (id, name, note, level, status, limits_most, limits_on) "
             "VALUES (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?)");
  // The first two columns are the key: the others are updated.
  BOOST_TEST(insert_sql(kSampleTable, 1, OnDuplicate::kUpdate) ==
             "INSERT INTO samples (id, name, note, level, status, limits_most, limits_on) "
             "VALUES (?, ?, ?, ?, ?, ?, ?) ON DUPLICATE KEY UPDATE note = VALUE(note), "
             "level = VALUE(level), status = VALUE(status), limits_most = VALUE(limits_most), "
             "limits_on = VALUE(limits_on)");
  BOOST_TEST(insert_where_sql(kSampleTable, "new_row.level > 1") ==
             "INSERT INTO samples (id, name, note, level, status, limits_most, limits_on) "
             "SELECT id, name, note, level, status, limits_most, limits_on FROM (SELECT ? AS id, "
             "? AS name, ? AS note, ? AS level, ? AS status, ? AS limits_most, ? AS limits_on) "
             "AS new_row WHERE new_row.level > 1");
}

BOOST_AUTO_TEST_CASE(values_follow_the_columns) {
  Sample s{7, "seven", "", 3, HistoryStatus::kConfirmed, {42, true}};
  BOOST_TEST(shown(params_of(kSampleTable, s)) == "7 'seven' NULL 3 'Confirmed' 42 1");
  s.note = "kept";
  s.limits.on = false;
  s.name = "";  // bind(): empty text stays text
  BOOST_TEST(shown(params_of(kSampleTable, s)) == "7 '' 'kept' 3 'Confirmed' 42 0");
}

BOOST_AUTO_TEST_CASE(history_upsert_is_the_statement_it_was) {
  const std::string columns =
      "id, hash, pair_id, source_chain, destination_chain, source_deposit_address, "
      "source_sender, destination_address, source_block_number, destination_block_number, "
      "source_block_timestamp, destination_block_timestamp, source_tx_hash, source_tx_index, "
      "destination_tx_hash, source_asset_id, destination_asset_id, source_amount, "
      "destination_amount, fee, status, status_message";
  const std::string row = "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
  const std::string updates =
      "hash = VALUE(hash), pair_id = VALUE(pair_id), source_chain = VALUE(source_chain), "
      "destination_chain = VALUE(destination_chain), "
      "source_deposit_address = VALUE(source_deposit_address), "
      "source_sender = VALUE(source_sender), destination_address = VALUE(destination_address), "
      "source_block_number = VALUE(source_block_number), "
      "destination_block_number = VALUE(destination_block_number), "
      "source_block_timestamp = VALUE(source_block_timestamp), "
      "destination_block_timestamp = VALUE(destination_block_timestamp), "
      "source_tx_hash = VALUE(source_tx_hash), source_tx_index = VALUE(source_tx_index), "
      "destination_tx_hash = VALUE(destination_tx_hash), "
      "source_asset_id = VALUE(source_asset_id), "
      "destination_asset_id = VALUE(destination_asset_id), "
      "source_amount = VALUE(source_amount), destination_amount = VALUE(destination_amount), "
      "fee = VALUE(fee), status = VALUE(status), status_message = VALUE(status_message)";
  BOOST_TEST(insert_sql(connector::admin::kHistoryTable, 2, OnDuplicate::kUpdate) ==
             "INSERT INTO history (" + columns + ") VALUES " + row + ", " + row +
                 " ON DUPLICATE KEY UPDATE " + updates);
}

BOOST_AUTO_TEST_CASE(history_values_with_nulls_for_what_is_not_recorded) {
  HistoryRow r;
  r.id = 12;
  r.hash = "6d23a69b3ae84d202bbffb3d46aa8faf5f32ca198fdb73c1f8cba6332169a69f";
  r.pair_id = 3;
  r.source_slug = "unitiot";
  r.destination_slug = "unitcore";
  r.source_deposit_address = "0xD";
  r.source_sender = "0xS";
  r.destination_address = "0xR";
  r.source_block_number = "1200014";
  r.source_block_timestamp = "1700000061";
  r.source_tx_hash = "0xT";
  r.source_tx_index = 19;
  r.source_asset_id = 6;
  r.destination_asset_id = 5;
  r.source_amount = "428099619052";
  r.status = HistoryStatus::kDeposit;
  const ChainRefs refs = {{"unitcore", 1}, {"unitiot", 2}};
  BOOST_TEST(shown(params_of(connector::admin::kHistoryTable, r, refs)) ==
             "12 '6d23a69b3ae84d202bbffb3d46aa8faf5f32ca198fdb73c1f8cba6332169a69f' 3 2 1 '0xD' "
             "'0xS' '0xR' '1200014' NULL '1700000061' NULL '0xT' 19 NULL 6 5 '428099619052' "
             "NULL NULL 'Deposit' NULL");
  r.destination_block_number = "600010";
  r.destination_block_timestamp = "1700000122";
  r.destination_tx_hash = "0xU";
  r.destination_amount = "428099619000";
  r.fee = "52";
  r.status = HistoryStatus::kError;
  r.status_message = "reverted";
  BOOST_TEST(shown(params_of(connector::admin::kHistoryTable, r, refs)) ==
             "12 '6d23a69b3ae84d202bbffb3d46aa8faf5f32ca198fdb73c1f8cba6332169a69f' 3 2 1 '0xD' "
             "'0xS' '0xR' '1200014' '600010' '1700000061' '1700000122' '0xT' 19 '0xU' 6 5 "
             "'428099619052' '428099619000' '52' 'Error' 'reverted'");
}

BOOST_AUTO_TEST_CASE(a_slug_of_no_stored_chain_throws) {
  connector::admin::DepositAccountRow a{"unitiot", "0xD", "nowhere", "0xR"};
  const ChainRefs refs = {{"unitiot", 2}};
  BOOST_CHECK_THROW(params_of(connector::admin::kDepositAccountsTable, a, refs), std::out_of_range);
  a.recipient_slug = "unitiot";
  BOOST_TEST(shown(params_of(connector::admin::kDepositAccountsTable, a, refs)) ==
             "2 '0xD' 2 '0xR'");
}

BOOST_AUTO_TEST_CASE(reference_upserts_are_the_statements_they_were) {
  using namespace connector::admin;
  BOOST_TEST(insert_sql(kChainsTable, 1, OnDuplicate::kUpdate) ==
             "INSERT INTO chains (slug, network, chain_id, base_chain, deposit_factory, "
             "deposit_init_code_hash) VALUES (?, ?, ?, ?, ?, ?) ON DUPLICATE KEY UPDATE "
             "network = VALUE(network), chain_id = VALUE(chain_id), base_chain = "
             "VALUE(base_chain), deposit_factory = VALUE(deposit_factory), "
             "deposit_init_code_hash = VALUE(deposit_init_code_hash)");
  BOOST_TEST(insert_sql(kAssetsTable, 1, OnDuplicate::kUpdate) ==
             "INSERT INTO assets (id, chain_ref, address, name, symbol, decimals, asset_type) "
             "VALUES (?, ?, ?, ?, ?, ?, ?) ON DUPLICATE KEY UPDATE chain_ref = VALUE(chain_ref), "
             "address = VALUE(address), name = VALUE(name), symbol = VALUE(symbol), "
             "decimals = VALUE(decimals), asset_type = VALUE(asset_type)");
  BOOST_TEST(insert_sql(kChainStatusTable, 1, OnDuplicate::kUpdate) ==
             "INSERT INTO chain_status (chain_ref, status, latest_height, supply) VALUES (?, ?, "
             "?, ?) ON DUPLICATE KEY UPDATE status = VALUE(status), latest_height = "
             "VALUE(latest_height), supply = VALUE(supply)");
  BOOST_TEST(insert_sql(kDepositAccountsTable, 1, OnDuplicate::kIgnore) ==
             "INSERT IGNORE INTO deposit_accounts (deposit_chain, deposit_address, "
             "recipient_chain, recipient_address) VALUES (?, ?, ?, ?)");
  PairRow p{4, 3, 4, {"1000000", 10000000, "100000", "88450000", false}, {"5", 0, "0", "9", true}};
  BOOST_TEST(shown(params_of(kPairsTable, p)) ==
             "4 3 4 '1000000' 10000000 '100000' '88450000' 0 '5' 0 '0' '9' 1");
  const ChainStatusRow c{"unitiot", connector::domain::ChainStatus::kSyncing, 554120, "12345"};
  BOOST_TEST(shown(params_of(kChainStatusTable, c, ChainRefs{{"unitiot", 2}})) ==
             "2 'SYNCING' 554120 '12345'");
  const NetworkRow n{"UNITIoT", "unitiot", "SideBase", 1012, "", ""};
  BOOST_TEST(shown(params_of(kChainsTable, n)) == "'unitiot' 'UNITIoT' 1012 'SideBase' NULL NULL");
}
