#pragma once
// What the endpoint tests (test_endpoints_*.cpp) share: in-memory fakes of the database
// interfaces (db/interfaces.h), refreshed copies filled by hand, and the router over them: the
// request path from query string to JSON with no database. The same answers against MariaDB are
// in tests/integration/.
#include <rapidjson/document.h>

#include <boost/test/unit_test.hpp>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/router.h"
#include "chain/address.h"
#include "chain/bytes.h"
#include "db/history_filters.h"
#include "db/interfaces.h"
#include "pool/shared_state.h"

namespace connector::fakes {

inline domain::Chain chain(std::uint16_t ref, std::string slug, std::string network,
                           std::uint64_t chain_id, std::string base_chain, const char* factory,
                           const char* init_code_hash) {
  return {ref,
          std::move(slug),
          std::move(network),
          chain_id,
          std::move(base_chain),
          chain::Address::parse(factory),
          chain::parse_hash32(init_code_hash)};
}

// The sample fixture's two chains, their coins and the pair between them.
inline domain::ReferenceData reference_data() {
  domain::ReferenceData data;
  data.chains = {
      chain(1, "unitcore", "UNITCore", 36888, "MainBase",
            "0x7f3A1C9e2b4d6F8a0c1e3b5D7f9A2c4E6b8d0f12",
            "0x21c35dbe1b344a2488cf3321d6ce542f8e9f305544ff09e4993a62319a497c1f"),
      chain(2, "unitiot", "UNITIoT", 1012, "SideBase", "0x3c5e7a9b1d2F4A6C8E0B2d4f6a8c0E1B3d5F7A9c",
            "0x5b1f8e2d4c6a9b3e7f0d1c2b4a6e8f9d0c3b5a7e9f1d3c5b7a9e0f2d4c6b8a01")};
  data.assets = {{1, 1, "", "UNIT", "UNIT", 18, "Coin"}, {2, 2, "", "UNIT", "UNIT", 18, "Coin"}};
  data.connects = {{1, 2}};
  data.pairs = {
      {7,
       1,
       2,
       {"1000000000000000000", 30000000, "500000000000000000", "100000000000000000000", false},
       {"2000000000000000000", 25000000, "0", "100000000000000000000", true}}};
  return data;
}

inline domain::HistoryRecord record() {
  domain::HistoryRecord r;
  r.id = 42;
  r.hash = std::string(64, 'a');
  r.pair_id = 7;
  r.source_chain = 1;
  r.destination_chain = 2;
  r.source_asset_id = 1;
  r.destination_asset_id = 2;
  r.source_deposit_address = "0x" + std::string(40, 'b');
  r.source_sender = "0x" + std::string(40, 'c');
  r.destination_address = "0x" + std::string(40, 'd');
  r.source_block_number = "100";
  r.source_block_timestamp = "1700000000";
  r.source_tx_hash = "0x" + std::string(64, 'e');
  r.source_amount = "1500000000000000000";
  r.status = domain::HistoryStatus::kConfirmed;
  return r;
}

struct FakeHistory final : db::HistoryReader {
  std::optional<db::HistoryFilter> filter;
  // One record: on page 0, and past the end of it an empty page.
  db::HistoryPage find_page(const db::HistoryFilter& f, std::uint64_t page_id, std::uint32_t,
                            domain::SortOrder) override {
    filter = f;
    if (page_id > 0) return {1, {}};
    return {1, {record()}};
  }
  bool database_down = false;  // find_by_hash throws as a lost database does
  std::optional<domain::HistoryRecord> find_by_hash(const std::string& hash) override {
    if (database_down) throw db::DatabaseUnavailable("down");
    if (hash != record().hash) return std::nullopt;
    return record();
  }
  // The feed: these changes, each of record(); what was asked for is kept.
  std::vector<db::FeedChange> feed;
  std::optional<std::uint64_t> held;  // the feed's end here, when not the last change's
  std::string asked;
  std::uint64_t feed_end() override { return held.value_or(feed.empty() ? 0 : feed.back().seq); }
  std::optional<db::RecordState> record_state(std::uint64_t) override {
    return db::RecordState{record(), feed.empty() ? 0 : feed.back().seq};
  }
  std::vector<db::FeedChange> record_changes(std::uint64_t history_id, std::uint64_t after,
                                             std::uint64_t upto, std::uint32_t limit) override {
    asked = "record " + std::to_string(history_id);
    return between(after, upto, limit);
  }
  std::vector<db::FeedChange> address_changes(std::string_view address, std::uint64_t after,
                                              std::uint64_t upto, std::uint32_t limit) override {
    asked = "address " + std::string(address);
    return between(after, upto, limit);
  }
  std::vector<db::FeedChange> between(std::uint64_t after, std::uint64_t upto,
                                      std::uint32_t limit) const {
    std::vector<db::FeedChange> found;
    for (const auto& change : feed) {
      if (change.seq > after && change.seq <= upto && found.size() < limit) found.push_back(change);
    }
    return found;
  }
};

struct FakeAccounts final : db::DepositAccounts {
  std::vector<db::DepositAccount> recorded;
  std::uint32_t capped_for_s = 0;  // non-zero: the cap on new rows is reached for that long
  void record(const db::DepositAccount& account) override {
    if (capped_for_s != 0) throw db::NewRowCapReached(capped_for_s);
    recorded.push_back(account);
  }
};

struct FakeReadiness final : db::ReadinessCheck {
  void check() override {}
};

struct Fixture {
  FakeHistory history;
  FakeAccounts accounts;
  FakeReadiness readiness;
  db::RefreshedReference reference{std::chrono::milliseconds(1000)};
  db::RefreshedSupply supply{std::chrono::milliseconds(1000)};
  pool::SharedState state;
  api::Router router{{history, accounts, readiness, reference, supply, state}};

  Fixture() {
    reference.store(reference_data());
    supply.store({{"unitcore", "UNITCore", "36888", "MainBase", domain::ChainStatus::kOk, "1226650",
                   "UNIT", "UNIT", 18, "12500000000000000000"}});
  }

  // The body of a 200 answer, parsed; checks the status and Cache-Control.
  rapidjson::Document get(std::string_view path, std::string_view query,
                          std::string_view cache_control) {
    const auto response = router.handle({"GET", path, query, {}, "rid-1"});
    BOOST_TEST_REQUIRE(response.status == 200, std::string(response.body));
    BOOST_TEST(response.head.find("Cache-Control: " + std::string(cache_control) + "\r\n") !=
               std::string::npos);
    rapidjson::Document doc;
    doc.Parse(response.body.data(), response.body.size());
    BOOST_TEST_REQUIRE(!doc.HasParseError());
    return doc;
  }
};

inline std::string text(const rapidjson::Value& v) { return {v.GetString(), v.GetStringLength()}; }

}  // namespace connector::fakes
