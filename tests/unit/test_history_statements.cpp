// The fixed statement set of history reads (db/history_statements.h): every combination of the
// filters (db/history_filters.h), in both orders and both page forms, maps into one set whose size
// does not depend on what clients send, and each statement gets one value per placeholder. With
// the other statements (db/statement_set.h), it fits a connection's statement cache.
#define BOOST_TEST_MODULE history_statements
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <set>
#include <string>
#include <variant>

#include "db/connection.h"
#include "db/history_statements.h"
#include "db/statement_set.h"

using connector::db::AccessPath;
using connector::db::choose_access_path;
using connector::db::count_statement;
using connector::db::FilterKind;
using connector::db::history_access_paths;
using connector::db::HistoryFilter;
using connector::db::kHistoryFilterCount;
using connector::db::kHistoryFilters;
using connector::db::page_statement;
using connector::db::PageForm;
using connector::db::Param;
using connector::db::TotalSource;
using connector::domain::SortOrder;

namespace {

// A value of the i-th filter (db::kHistoryFilters), as its kind is bound.
Param sample(std::size_t i) {
  const char digit = static_cast<char>('a' + i % 6);
  switch (kHistoryFilters[i].kind) {
    case FilterKind::kAddress:
      return "0x" + std::string(40, digit);
    case FilterKind::kTxHash:
      return "0x" + std::string(64, digit);
    case FilterKind::kChain:
    case FilterKind::kId:
      return std::uint64_t{i + 1};
    case FilterKind::kStatus:
      return std::string("Confirmed");
  }
  return {};
}

// The filter with bit i of `mask` setting the i-th filter.
HistoryFilter filter_of(unsigned mask) {
  HistoryFilter f;
  for (std::size_t i = 0; i < kHistoryFilterCount; ++i) {
    if ((mask >> i) & 1u) f.values[i] = sample(i);
  }
  return f;
}

std::size_t placeholders(const std::string& sql) {
  return static_cast<std::size_t>(std::count(sql.begin(), sql.end(), '?'));
}

// The filters that drive a path (its own, and the status for a (column, status) path).
HistoryFilter drivers_of(const AccessPath& path) {
  HistoryFilter f;
  if (path.filter < kHistoryFilterCount) f.values[path.filter] = sample(path.filter);
  if (path.with_status) f["status"] = sample(connector::db::history_filter("status"));
  return f;
}

// Whether a request can reach the path with a filter it does not drive set too (a residual):
// one more filter set on top of its drivers, and the path still chosen.
bool reachable_with_residuals(const AccessPath& path) {
  for (std::size_t i = 0; i < kHistoryFilterCount; ++i) {
    HistoryFilter f = drivers_of(path);
    if (f.is_set(i)) continue;
    f.values[i] = sample(i);
    if (&choose_access_path(f) == &path) return true;
  }
  return false;
}

// The statement texts a path adds to the set: its pages (2 orders x the direct and the deferred
// form) and, unless its total is the counters' sum (one text for every such path), its count.
std::size_t own_statements(const AccessPath& path) {
  return 2u * 2u + (path.total == TotalSource::kCounters ? 0u : 1u);
}

}  // namespace

BOOST_AUTO_TEST_CASE(every_filter_combination_maps_into_the_fixed_set) {
  const auto all = connector::db::all_history_statements();
  const std::set<std::string> known(all.begin(), all.end());
  BOOST_TEST(known.size() == all.size());  // listed once each
  // Each access path (kHistoryFilters' driving indexes, and the unfiltered list) with and without
  // residuals: its pages, and its count unless the counters' sum gives it (the tx hashes count
  // their index range, an address its counters without residuals and its index with them);
  // the counters' sum; by hash. (162 with the eleven filters of today.)
  std::size_t expected = 2;
  std::size_t reachable = 1;  // the counters' sum
  for (const auto& path : history_access_paths()) {
    expected += 2u * own_statements(path);
    reachable += own_statements(path) * (reachable_with_residuals(path) ? 2u : 1u);
  }
  BOOST_TEST(all.size() == expected);
  std::set<std::string> used;
  for (unsigned mask = 0; mask < (1u << kHistoryFilterCount); ++mask) {
    const HistoryFilter filter = filter_of(mask);
    const auto& path = choose_access_path(filter);
    const auto count = count_statement(path, filter);
    BOOST_TEST_REQUIRE(known.count(count.sql) == 1u, count.sql);
    BOOST_TEST_REQUIRE(placeholders(count.sql) == count.params.size());
    used.insert(count.sql);
    for (auto order : {SortOrder::kAscending, SortOrder::kDescending}) {
      for (auto form : {PageForm::kDirect, PageForm::kDeferred}) {
        const auto page = page_statement(path, filter, order, form);
        BOOST_TEST_REQUIRE(known.count(page.sql) == 1u, page.sql);
        BOOST_TEST_REQUIRE(placeholders(page.sql) == page.params.size() + 2);  // LIMIT, OFFSET
        used.insert(page.sql);
      }
    }
  }
  // Some of the set cannot be reached: a path with residuals that no further filter leaves
  // chosen (the unfiltered list, the least selective paths). 145 are with the filters of today,
  // besides the by-hash statement.
  BOOST_TEST(used.size() == reachable);
  BOOST_TEST(reachable < all.size() - 1);
}

BOOST_AUTO_TEST_CASE(the_most_selective_filter_drives_the_index) {
  HistoryFilter f;
  BOOST_TEST(choose_access_path(f).index == "PRIMARY");
  f["status"] = std::string("Pending");
  BOOST_TEST(choose_access_path(f).index == "ix_history_status");
  f["source_blockchain"] = std::uint64_t{1};
  BOOST_TEST(choose_access_path(f).index == "ix_history_source_chain_status");
  f["pair_id"] = std::uint64_t{2};
  BOOST_TEST(choose_access_path(f).index == "ix_history_pair_status");
  f["status"] = std::monostate{};
  BOOST_TEST(choose_access_path(f).index == "ix_history_pair");
  f["destination_address"] = "0x" + std::string(40, 'd');
  BOOST_TEST(choose_access_path(f).index == "ix_history_destination_address");
  f["status"] = std::string("Error");
  BOOST_TEST(choose_access_path(f).index == "ix_history_destination_address_status");
  f["destination_tx_hash"] = "0x" + std::string(64, 'e');
  BOOST_TEST(choose_access_path(f).index == "ix_history_destination_tx_hash");
}

BOOST_AUTO_TEST_CASE(driving_values_come_first_then_each_residual_twice_in_column_order) {
  HistoryFilter f;
  f["destination_address"] = std::string("0xdd");
  f["status"] = std::string("Error");
  f["pair_id"] = std::uint64_t{4};
  const auto& path = choose_access_path(f);
  const auto page = page_statement(path, f, SortOrder::kDescending, PageForm::kDirect);
  BOOST_TEST(page.sql.find("FORCE INDEX (ix_history_destination_address_status) WHERE "
                           "destination_address = ? AND status = ? AND "
                           "(? IS NULL OR source_deposit_address = ?)") != std::string::npos);
  BOOST_TEST(page.sql.find("ORDER BY h.id DESC LIMIT ? OFFSET ?") != std::string::npos);
  // The direct form's total: the count statement as a subquery after the record's columns,
  // its values first.
  const auto count = count_statement(path, f);
  BOOST_TEST(page.sql.find(", (" + count.sql + ") FROM history h FORCE INDEX") !=
             std::string::npos);
  const std::size_t k = count.params.size();
  // Two driving values, then every other filter twice.
  BOOST_TEST_REQUIRE(page.params.size() == k + 2u + 2u * (kHistoryFilterCount - 2));
  for (std::size_t i = 0; i < k; ++i) BOOST_TEST((page.params[i] == count.params[i]));
  BOOST_TEST((page.params[k] == Param(std::string("0xdd"))));
  BOOST_TEST((page.params[k + 1] == Param(std::string("Error"))));
  // source_deposit_address, source_sender, source_chain, ... unused: NULL; pair_id: 4.
  BOOST_TEST(std::holds_alternative<std::monostate>(page.params[k + 2]));
  BOOST_TEST((page.params[page.params.size() - 2] == Param(std::uint64_t{4})));
  BOOST_TEST((page.params.back() == Param(std::uint64_t{4})));
}

BOOST_AUTO_TEST_CASE(an_address_alone_is_counted_by_its_counters_another_filter_on_its_index) {
  HistoryFilter f;
  f["destination_address"] = std::string("0xdd");
  const auto alone = count_statement(choose_access_path(f), f);
  BOOST_TEST(alone.sql ==
             "SELECT COALESCE(SUM(records), 0) FROM history_address_counts WHERE "
             "address_column = 'destination_address' AND address = ?");
  BOOST_TEST((alone.params == connector::db::Params{std::string("0xdd")}));
  f["status"] = std::string("Error");
  const auto with_status = count_statement(choose_access_path(f), f);
  BOOST_TEST(with_status.sql ==
             "SELECT COALESCE(SUM(records), 0) FROM history_address_counts WHERE "
             "address_column = 'destination_address' AND address = ? AND status = ?");
  BOOST_TEST(
      (with_status.params == connector::db::Params{std::string("0xdd"), std::string("Error")}));
  f["status"] = std::monostate{};
  f["pair_id"] = std::uint64_t{3};
  const auto with_pair = count_statement(choose_access_path(f), f);
  BOOST_TEST(with_pair.sql.rfind("SELECT COUNT(*) FROM history FORCE INDEX "
                                 "(ix_history_destination_address) WHERE destination_address = ?",
                                 0) == 0u);
  BOOST_TEST(with_pair.sql.find("AND (? IS NULL OR pair_id = ?)") != std::string::npos);
  BOOST_TEST(with_pair.params.size() == 1u + 2u * (kHistoryFilterCount - 1));
}

BOOST_AUTO_TEST_CASE(coarse_filters_are_counted_from_the_counters_fine_ones_on_their_index) {
  HistoryFilter f;
  f["pair_id"] = std::uint64_t{1};
  f["status"] = std::string("Pending");
  const auto coarse = count_statement(choose_access_path(f), f);
  BOOST_TEST(coarse.sql.rfind("SELECT COALESCE(SUM(records), 0) FROM history_counts WHERE", 0) ==
             0u);
  BOOST_TEST(coarse.params.size() == 12u);  // six dimensions, each residual
  f["source_sender"] =
      std::string("0xbb");  // with a pair: the sender's index range, not its counters
  const auto fine = count_statement(choose_access_path(f), f);
  BOOST_TEST(fine.sql.rfind("SELECT COUNT(*) FROM history FORCE INDEX "
                            "(ix_history_source_sender_status) WHERE source_sender = ?",
                            0) == 0u);
}

BOOST_AUTO_TEST_CASE(deep_pages_join_their_ids_in_a_fixed_order) {
  const HistoryFilter none;
  const auto page =
      page_statement(choose_access_path(none), none, SortOrder::kAscending, PageForm::kDeferred);
  BOOST_TEST(page.sql.rfind("SELECT STRAIGHT_JOIN ", 0) == 0u);
  // No residual conditions when no filter is set: the ids come from the index alone.
  BOOST_TEST(page.sql.find("FROM (SELECT id FROM history FORCE INDEX (ix_history_id) ORDER BY "
                           "id ASC LIMIT ? OFFSET ?) p") != std::string::npos);
  BOOST_TEST(page.params.empty());
  BOOST_TEST(page.sql.find(") p JOIN history h FORCE INDEX (PRIMARY) ON h.id = p.id") !=
             std::string::npos);
}

// Every statement a connection can prepare, whatever clients send: the history set and the
// others, each text listed once, within the statement cache (past it a connection would close
// and prepare statements again on every request: a filter that grows the set that far must
// raise the bound).
BOOST_AUTO_TEST_CASE(a_connections_statements_fit_its_statement_cache) {
  const auto history = connector::db::all_history_statements();
  const auto others = connector::db::other_statements();
  std::set<std::string> all(history.begin(), history.end());
  for (const auto& text : others) {
    BOOST_TEST(!text.empty());
    BOOST_TEST(all.insert(text).second, "listed twice: " << text);
  }
  BOOST_TEST(all.size() <= connector::db::Connection::kMaxStatements);
}
