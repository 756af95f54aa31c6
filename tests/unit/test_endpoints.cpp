// Every endpoint's 200 answer through the router, against in-memory fakes of the
// database interfaces (db/interfaces.h) and refreshed copies filled by hand: the request path from
// query string to JSON with no database. The same answers against MariaDB are in
// tests/integration/.
#define BOOST_TEST_MODULE endpoints
#include <rapidjson/document.h>

#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "api/params.h"
#include "api/router.h"
#include "chain/address.h"
#include "chain/bytes.h"
#include "db/history_filters.h"
#include "db/history_statements.h"
#include "db/interfaces.h"
#include "pool/shared_state.h"
#include "util/clock.h"

using namespace connector;

namespace {

domain::Chain chain(std::uint16_t ref, std::string slug, std::string network,
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
domain::ReferenceData reference_data() {
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

domain::HistoryRecord record() {
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

std::string text(const rapidjson::Value& v) { return {v.GetString(), v.GetStringLength()}; }

}  // namespace

BOOST_FIXTURE_TEST_SUITE(endpoints_on_fakes, Fixture)

BOOST_AUTO_TEST_CASE(networks) {
  const auto doc = get("/v1/networks", "", "public, max-age=60");
  BOOST_TEST_REQUIRE(doc["networks"].Size() == 2u);
  const auto& core = doc["networks"][0];
  BOOST_TEST(text(core["network"]) == "UNITCore");
  BOOST_TEST(text(core["chain_id"]) == "36888");
  BOOST_TEST(text(core["base_chain"]) == "MainBase");
  BOOST_TEST(text(core["slug"]) == "unitcore");
  BOOST_TEST(text(doc["networks"][1]["slug"]) == "unitiot");
}

BOOST_AUTO_TEST_CASE(connects) {
  const auto doc = get("/v1/connects", "", "public, max-age=60");
  BOOST_TEST_REQUIRE(doc["connects"].Size() == 1u);
  BOOST_TEST(text(doc["connects"][0]["bc1"]["slug"]) == "unitcore");
  BOOST_TEST(text(doc["connects"][0]["bc2"]["chain_id"]) == "1012");
}

BOOST_AUTO_TEST_CASE(pairs) {
  const auto doc = get("/v1/pairs", "", "public, max-age=60");
  BOOST_TEST_REQUIRE(doc["pairs"].Size() == 1u);
  const auto& p = doc["pairs"][0];
  BOOST_TEST(text(p["id"]) == "7");
  BOOST_TEST(text(p["connect_pair"]) == "unitcore-unitiot");
  BOOST_TEST(text(p["a2b_min_deposit_amount"]) == "1");
  BOOST_TEST(text(p["a2b_fee_percent"]) == "30.000000");
  BOOST_TEST(text(p["a2b_fee_min_amount"]) == "0.5");
  BOOST_TEST(text(p["b2a_fee_min_amount"]) == "0");
  BOOST_TEST(p["a2b_disabled"].IsFalse());
  BOOST_TEST(p["b2a_disabled"].IsTrue());
  BOOST_TEST(text(p["asset_b"]["network"]) == "UNITIoT");
}

BOOST_AUTO_TEST_CASE(history_with_filters) {
  const std::string address = "0x" + std::string(40, 'D');
  const auto doc =
      get("/v1/history", "status=confirmed&destination_address=" + address + "&order=asc",
          "public, max-age=2");
  BOOST_TEST(text(doc["total_history"]) == "1");
  BOOST_TEST(text(doc["total_page"]) == "1");
  BOOST_TEST(text(doc["page_size"]) == "20");
  BOOST_TEST_REQUIRE(doc["list"].Size() == 1u);
  const auto& r = doc["list"][0];
  BOOST_TEST(text(r["id"]) == "42");
  BOOST_TEST(r["pair_id"].GetUint64() == 7u);
  BOOST_TEST(text(r["source_network"]) == "UNITCore");
  BOOST_TEST(text(r["destination_slug"]) == "unitiot");
  BOOST_TEST(text(r["source_amount"]) == "1.5");
  BOOST_TEST(text(r["destination_amount"]) == "");
  BOOST_TEST(!r.HasMember("status_message"));
  BOOST_TEST(text(doc["status"]) == "Confirmed");
  BOOST_TEST(text(doc["destination_address"]) == address);  // echoed as sent
  // What the history reader was asked: typed, validated filters.
  BOOST_TEST_REQUIRE(history.filter.has_value());
  const auto& filter = *history.filter;
  BOOST_TEST((filter["status"] == db::Param(std::string("Confirmed"))));
  BOOST_TEST((filter["destination_address"] == db::Param("0x" + std::string(40, 'd'))));
  BOOST_TEST(!filter.is_set(db::history_filter("pair_id")));
}

// A parameter left out is the value its description says it stands for (absent_means): the
// same answer as that value written out, which nginx keys as one (scripts/nginx-contract); the
// page size's is the default.
BOOST_AUTO_TEST_CASE(an_absent_parameter_is_the_value_it_stands_for) {
  std::string written_out;
  for (const auto& p : api::kHistoryEndpoint.params) {
    if (p.absent_means.empty()) continue;
    if (p.kind == api::ParamKind::kPageSize) {
      BOOST_TEST(api::parse_page_size(p.name, p.absent_means) == api::kDefaultPageSize);
    }
    written_out += (written_out.empty() ? "" : "&") + std::string(p.name) + "=";
    written_out += p.absent_means;
  }
  BOOST_TEST(written_out == "page_id=0&page_size=20&order=DESC");
  const std::string left_out(router.handle({"GET", "/v1/history", "", {}, "rid-1"}).body);
  const auto spelled = router.handle({"GET", "/v1/history", written_out, {}, "rid-1"});
  BOOST_TEST(spelled.status == 200);
  BOOST_TEST(std::string(spelled.body) == left_out);
  BOOST_TEST(left_out.find(R"("page_id":"0","page_size":"20",)") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(empty_history_pages_are_not_for_nginx_to_store) {
  const auto page = router.handle({"GET", "/v1/history", "page_size=5", {}, "rid-1"});
  const auto past_end = router.handle({"GET", "/v1/history", "page_id=9", {}, "rid-1"});
  BOOST_TEST(page.status == 200);
  BOOST_TEST(page.head.find("X-Accel-Expires") == std::string::npos);
  BOOST_TEST(past_end.status == 200);
  BOOST_TEST(past_end.head.find("\r\nX-Accel-Expires: 0\r\n") != std::string::npos);
  // Clients and other caches still get the endpoint's Cache-Control.
  BOOST_TEST(past_end.head.find("\r\nCache-Control: public, max-age=2\r\n") != std::string::npos);
  BOOST_TEST(std::string(past_end.body).find("\"list\":[]") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(history_by_hash) {
  const auto doc = get("/v1/history/hash", "hash=0X" + std::string(64, 'A'),
                       "public, max-age=3600");  // Confirmed is final
  BOOST_TEST(text(doc["id"]) == "42");
  BOOST_TEST(text(doc["hash"]) == std::string(64, 'a'));
  BOOST_TEST(text(doc["status"]) == "Confirmed");
  BOOST_TEST(text(doc["status_message"]) ==
             "The transfer is complete: the payout is confirmed on the destination chain.");
}

BOOST_AUTO_TEST_CASE(account) {
  const auto doc = get("/v1/account",
                       "recipient_address=0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"
                       "&recipient_blockchain=unitcore&deposit_blockchain=unitiot",
                       "public, max-age=86400, immutable");
  // docs/tour.md's example: the same chains, factory and init code hash.
  BOOST_TEST(text(doc["deposit_address"]) == "0x617866C9257ef02cEf8074A5D1a7D372B142cbEb");
  BOOST_TEST(text(doc["recipient_blockchain"]) == "unitcore");
  BOOST_TEST_REQUIRE(accounts.recorded.size() == 1u);  // recorded before it was shown
  BOOST_TEST(accounts.recorded[0].deposit_chain == 2u);
  BOOST_TEST(accounts.recorded[0].deposit_address == "0x617866C9257ef02cEf8074A5D1a7D372B142cbEb");
  BOOST_TEST(accounts.recorded[0].recipient_chain == 1u);
  BOOST_TEST(accounts.recorded[0].recipient_address ==
             "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed");
}

BOOST_AUTO_TEST_CASE(account_past_the_cap_on_new_rows_is_a_503_with_its_retry_after) {
  accounts.capped_for_s = 17;
  const auto response =
      router.handle({"GET",
                     "/v1/account",
                     "recipient_address=0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"
                     "&recipient_blockchain=unitcore&deposit_blockchain=unitiot",
                     {},
                     "rid-1"});
  BOOST_TEST(response.status == 503);
  BOOST_TEST(response.head.find("\r\nRetry-After: 17\r\n") != std::string::npos);
  BOOST_TEST(response.head.find("\r\nCache-Control: no-store\r\n") != std::string::npos);
  BOOST_TEST(std::string(response.body).find("\"code\":\"unavailable\"") != std::string::npos);
  BOOST_TEST(std::string(response.body).find("0x617866C9257ef02cEf8074A5D1a7D372B142cbEb") ==
             std::string::npos);  // no address shown that is not recorded
}

BOOST_AUTO_TEST_CASE(chain_supply) {
  const auto doc = get("/v1/ab", "", "public, max-age=5");
  BOOST_TEST_REQUIRE(doc["chains"].Size() == 1u);
  const auto& c = doc["chains"][0];
  BOOST_TEST(text(c["slug"]) == "unitcore");
  BOOST_TEST(text(c["status"]) == "OK");
  BOOST_TEST(text(c["latest_height"]) == "1226650");
  BOOST_TEST(c["decimals"].GetInt() == 18);
  BOOST_TEST(text(c["supply"]) == "12.5");
}

BOOST_AUTO_TEST_CASE(readyz) {
  const auto response = router.handle({"GET", "/readyz", "", {}, "rid-1"});
  BOOST_TEST(response.status == 200);
  BOOST_TEST(std::string(response.body) == R"({"status":"ready","servers":[]})");
}

BOOST_AUTO_TEST_SUITE_END()

namespace {

// The event endpoints, served (a publisher's board), against the same fakes.
struct EventsFixture : Fixture {
  pool::EventsBoard& board = state.events;
  api::Router events_router{{history, accounts, readiness, reference, supply, state, {}, &board}};
  const std::string hash_query = "hash=" + std::string(64, 'a');
  const std::string address_query = "address=0x" + std::string(40, 'D');

  EventsFixture() {
    for (const std::uint64_t seq : {10, 11, 13}) history.feed.push_back({seq, record()});
  }
  // As an EventSource asks (Accept: text/event-stream).
  api::HttpRequest events_request(std::string_view path, std::string_view query,
                                  std::string_view last_event_id = {}) {
    return {.method = "GET",
            .path = path,
            .query_string = query,
            .if_none_match = {},
            .request_id = "rid-1",
            .deadline = std::chrono::steady_clock::time_point::max(),
            .last_event_id = last_event_id,
            .if_modified_since = {},
            .accept = "text/event-stream",
            .upgrade = {}};
  }
  api::HttpResponse get_events(std::string_view path, std::string_view query,
                               std::string_view last_event_id) {
    return events_router.handle(events_request(path, query, last_event_id));
  }
  // An event as a reconnection is answered it: the record as /v1/history/hash answers it.
  std::string event(std::uint64_t seq) {
    const auto by_hash = router.handle({"GET", "/v1/history/hash", hash_query, {}, "rid-1"});
    return "id: " + std::to_string(seq) + "\ndata: " + std::string(by_hash.body) + "\n\n";
  }
};

bool has_header(const api::HttpResponse& response, const std::string& line) {
  return response.head.find("\r\n" + line + "\r\n") != std::string::npos;
}

}  // namespace

BOOST_FIXTURE_TEST_SUITE(event_endpoints_on_fakes, EventsFixture)

BOOST_AUTO_TEST_CASE(a_first_subscription_is_handed_to_nchan_and_reads_no_feed) {
  const auto record = get_events("/v1/history/hash/events", hash_query, "");
  BOOST_TEST(record.status == 200);
  BOOST_TEST(
      has_header(record, "X-Accel-Redirect: /connector-events/record/" + std::string(64, 'a')));
  BOOST_TEST(record.body.empty());
  const auto address = get_events("/v1/history/events", address_query, "");
  BOOST_TEST(
      has_header(address, "X-Accel-Redirect: /connector-events/address/0x" + std::string(40, 'd')));
  BOOST_TEST(history.asked == "");
}

BOOST_AUTO_TEST_CASE(a_reconnection_is_answered_the_published_changes_it_missed) {
  board.cursor.store(12);
  board.cursor_known.store(true);
  const auto response = get_events("/v1/history/hash/events", hash_query, "10");
  BOOST_TEST(response.status == 200);
  BOOST_TEST(history.asked == "record 42");
  // 11 only: 10 it has, 13 is not published yet (the stream it is handed to next gets it).
  BOOST_TEST(std::string(response.body) == "retry: 3000\n" + event(11));
  BOOST_TEST(has_header(response, "Content-Type: text/event-stream; charset=utf-8"));
  BOOST_TEST(has_header(response, "Cache-Control: no-store"));
  BOOST_TEST(response.head.find("X-Accel-Redirect") == std::string::npos);
  BOOST_TEST(response.head.find("ETag") == std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_reconnection_that_missed_nothing_gets_the_changes_from_now_on) {
  board.cursor.store(12);
  board.cursor_known.store(true);
  // 12 went out more than the recent channels keep (EventsBoard::settled_cursor); before that,
  // a stream that had it would get it again there: it is told to come back shortly.
  board.settled_cursor.store(11);
  const auto recent = get_events("/v1/history/events", address_query, "12");
  BOOST_TEST(std::string(recent.body) == "retry: 3000\n: again shortly\n\n");
  BOOST_TEST(recent.head.find("X-Accel-Redirect") == std::string::npos);
  board.settled_cursor.store(12);
  const auto record = get_events("/v1/history/hash/events", hash_query, "11");
  BOOST_TEST(has_header(
      record, "X-Accel-Redirect: /connector-events/record-changes/" + std::string(64, 'a')));
  BOOST_TEST(record.body.empty());
  const auto address = get_events("/v1/history/events", address_query, "12");
  BOOST_TEST(has_header(
      address, "X-Accel-Redirect: /connector-events/address-changes/0x" + std::string(40, 'd')));
}

BOOST_AUTO_TEST_CASE(a_reconnection_this_node_cannot_answer_yet_is_told_to_come_back) {
  // Before the publisher's first round; then with this read server behind the publisher's;
  // then with the database lost: an empty stream (a comment), never a 503, which would stop a
  // browser's EventSource for good.
  const std::string again = "retry: 3000\n: again shortly\n\n";
  const auto starting = get_events("/v1/history/events", address_query, "9");
  BOOST_TEST(std::string(starting.body) == again);
  BOOST_TEST(has_header(starting, "Content-Type: text/event-stream; charset=utf-8"));
  board.cursor.store(13);
  board.cursor_known.store(true);
  history.held = 12;
  const auto behind = get_events("/v1/history/hash/events", hash_query, "9");
  BOOST_TEST(behind.status == 200);
  BOOST_TEST(std::string(behind.body) == again);
  history.held.reset();
  history.database_down = true;
  for (const auto* last_event_id : {"", "9"}) {
    const auto lost = get_events("/v1/history/hash/events", hash_query, last_event_id);
    BOOST_TEST(lost.status == 200);
    BOOST_TEST(std::string(lost.body) == again);
  }
}

BOOST_AUTO_TEST_CASE(an_empty_feed_is_no_lag) {
  // Nothing changed for a day: the trim emptied the feed. Not a server behind the publisher.
  board.cursor.store(12);
  board.cursor_known.store(true);
  board.settled_cursor.store(12);
  history.held = 0;
  const auto response = get_events("/v1/history/hash/events", hash_query, "12");
  BOOST_TEST(has_header(
      response, "X-Accel-Redirect: /connector-events/record-changes/" + std::string(64, 'a')));
  const auto poll = get_events("/v1/history/changes", address_query, "");
  BOOST_TEST(std::string(poll.body) == R"({"changes":[],"after":"12"})");
}

BOOST_AUTO_TEST_CASE(one_answer_carries_at_most_a_hundred_missed_changes) {
  board.cursor.store(150);
  board.cursor_known.store(true);
  history.feed.clear();
  for (std::uint64_t seq = 1; seq <= 150; ++seq) history.feed.push_back({seq, record()});
  const auto response = get_events("/v1/history/events", address_query, "0");
  std::string expected = "retry: 3000\n";
  for (std::uint64_t seq = 1; seq <= 100; ++seq) expected += event(seq);
  BOOST_TEST(std::string(response.body) == expected);
}

// A long-poll's change list, each change the record as /v1/history/hash answers it.
std::string change_list(EventsFixture& f, std::initializer_list<std::uint64_t> seqs,
                        std::uint64_t after) {
  const auto by_hash = f.router.handle({"GET", "/v1/history/hash", f.hash_query, {}, "rid-1"});
  std::string list = "{\"changes\":[";
  for (const auto seq : seqs) {
    if (list.back() == '}') list += ',';
    list +=
        "{\"seq\":\"" + std::to_string(seq) + "\",\"record\":" + std::string(by_hash.body) + "}";
  }
  return list + "],\"after\":\"" + std::to_string(after) + "\"}";
}

BOOST_AUTO_TEST_CASE(a_first_poll_is_where_to_poll_from_and_a_records_state) {
  board.cursor.store(12);
  board.cursor_known.store(true);
  history.feed.pop_back();  // the record's newest change is 11, the feed's 12 (another's)
  history.held = 12;
  const auto first = get_events("/v1/history/hash/changes", hash_query, "");
  BOOST_TEST(first.status == 200);
  BOOST_TEST(std::string(first.body) == change_list(*this, {11}, 12));
  BOOST_TEST(has_header(first, "Content-Type: application/json; charset=utf-8"));
  BOOST_TEST(has_header(first, "Cache-Control: no-store"));
  BOOST_TEST(first.head.find("ETag") == std::string::npos);  // for this moment only
  const auto address = get_events("/v1/history/changes", address_query, "");
  BOOST_TEST(std::string(address.body) == R"({"changes":[],"after":"12"})");
  BOOST_TEST(history.asked == "");
  // A state newer than the cursor (its change not published yet): polled from after it.
  history.feed.push_back({13, record()});
  const auto ahead = get_events("/v1/history/hash/changes", hash_query, "");
  BOOST_TEST(std::string(ahead.body) == change_list(*this, {13}, 13));
}

BOOST_AUTO_TEST_CASE(a_poll_after_a_seq_gets_the_published_changes_or_waits_in_nchan) {
  board.cursor.store(12);
  board.cursor_known.store(true);
  const auto missed = get_events("/v1/history/hash/changes", hash_query + "&after=9", "");
  BOOST_TEST(history.asked == "record 42");
  BOOST_TEST(std::string(missed.body) == change_list(*this, {10, 11}, 11));
  const auto waits = get_events("/v1/history/hash/changes", hash_query + "&after=11", "");
  BOOST_TEST(
      has_header(waits, "X-Accel-Redirect: /connector-events/poll-record/" + std::string(64, 'a')));
  BOOST_TEST(waits.body.empty());
  const auto address = get_events("/v1/history/changes", address_query + "&after=10", "");
  BOOST_TEST(history.asked == "address 0x" + std::string(40, 'd'));
  BOOST_TEST(std::string(address.body) == change_list(*this, {11}, 11));
  const auto next = get_events("/v1/history/changes", address_query + "&after=12", "");
  BOOST_TEST(has_header(
      next, "X-Accel-Redirect: /connector-events/poll-address/0x" + std::string(40, 'd')));
}

BOOST_AUTO_TEST_CASE(a_poll_this_node_cannot_answer_yet_is_a_503_to_retry) {
  for (const auto& [path, query] : {std::pair{"/v1/history/hash/changes", hash_query},
                                    std::pair{"/v1/history/hash/changes", hash_query + "&after=3"},
                                    std::pair{"/v1/history/changes", address_query}}) {
    const auto response = get_events(path, query, "");
    BOOST_TEST(response.status == 503, query);
    BOOST_TEST(has_header(response, "Retry-After: 1"), query);
  }
  board.cursor.store(13);
  board.cursor_known.store(true);
  history.held = 12;
  const auto behind = get_events("/v1/history/changes", address_query + "&after=3", "");
  BOOST_TEST(behind.status == 503);
}

BOOST_AUTO_TEST_CASE(conditional_headers_never_reach_nchan) {
  // nchan reads a message id from them, and nchan 1.3.6 aborts on some: a 400 at the worker.
  for (const std::string path : {"/v1/history/hash/events", "/v1/history/hash/changes"}) {
    api::HttpRequest request{.method = "GET",
                             .path = path,
                             .query_string = hash_query,
                             .if_none_match = "0",
                             .request_id = "rid-1",
                             .deadline = std::chrono::steady_clock::time_point::max(),
                             .last_event_id = {},
                             .if_modified_since = {}};
    const auto none_match = events_router.handle(request);
    BOOST_TEST(none_match.status == 400);
    BOOST_TEST(std::string(none_match.body).find(R"("param":"If-None-Match")") !=
               std::string::npos);
    request.if_none_match = {};
    request.if_modified_since = "Thu, 26 Nov 2026 19:17:10 GMT";
    const auto modified_since = events_router.handle(request);
    BOOST_TEST(modified_since.status == 400);
    BOOST_TEST(std::string(modified_since.body).find(R"("param":"If-Modified-Since")") !=
               std::string::npos);
    request.if_modified_since = "";  // present, empty: nchan reads it all the same
    BOOST_TEST(events_router.handle(request).status == 400);
  }
  BOOST_TEST(history.asked == "");
}

BOOST_AUTO_TEST_CASE(a_stream_nchan_would_refuse_is_a_json_error_and_asks_for_nothing) {
  for (const std::string path : {"/v1/history/hash/events", "/v1/history/events"}) {
    const auto query = path == "/v1/history/events" ? address_query : hash_query;
    // nchan's test: "text/event-stream" anywhere in Accept, in that case.
    for (const char* refused : {static_cast<const char*>(nullptr), "", "*/*", "application/json",
                                "text/*", "TEXT/EVENT-STREAM", "text/event_stream"}) {
      auto request = events_request(path, query);
      request.accept = refused == nullptr ? std::string_view{} : std::string_view{refused};
      const auto response = events_router.handle(request);
      BOOST_TEST(response.status == 406, path << " " << (refused ? refused : "(none)"));
      BOOST_TEST(std::string(response.body) ==
                     R"({"error":{"code":"not_acceptable","message":"This path answers )"
                     R"(text/event-stream only: send Accept: text/event-stream","param":)"
                     R"("Accept","request_id":"rid-1"}})",
                 path);
      BOOST_TEST(has_header(response, "Content-Type: application/json; charset=utf-8"));
      BOOST_TEST(has_header(response, "Cache-Control: no-store"));
    }
    for (const char* upgrade : {"websocket", "WebSocket", "h2c, WEBSOCKET"}) {
      auto request = events_request(path, query);
      request.upgrade = upgrade;
      const auto response = events_router.handle(request);
      BOOST_TEST(response.status == 400, path << " " << upgrade);
      const std::string expected =
          R"x("code":"invalid_parameter","message":"This path is a server-sent event stream: )x"
          R"x(it takes no Upgrade (no WebSocket)","param":"Upgrade")x";
      BOOST_TEST(std::string(response.body).find(expected) != std::string::npos);
    }
    for (const char* upgrade : {"h2c", ""}) {  // not a WebSocket: nchan serves it as a stream
      auto request = events_request(path, query);
      request.upgrade = upgrade;
      BOOST_TEST(events_router.handle(request).status == 200, path << " " << upgrade);
    }
    for (const char* accepted : {"text/html, text/event-stream;q=0.9", "text/event-streams"}) {
      auto request = events_request(path, query);
      request.accept = accepted;
      BOOST_TEST(events_router.handle(request).status == 200, path << " " << accepted);
    }
  }
  // Only the accepted GET of the record asked for its state.
  BOOST_TEST(board.take_initial_state_requests() == std::vector<std::uint64_t>{42},
             boost::test_tools::per_element());
  // Where events are not served, these paths are a 404 whatever the headers.
  auto request = events_request("/v1/history/hash/events", hash_query);
  request.accept = {};
  BOOST_TEST(router.handle(request).status == 404);
}

BOOST_AUTO_TEST_CASE(a_head_of_a_stream_is_answered_here_and_asks_for_no_initial_state) {
  for (const auto& [path, query, type] :
       {std::tuple{"/v1/history/hash/events", hash_query, "text/event-stream; charset=utf-8"},
        std::tuple{"/v1/history/events", address_query, "text/event-stream; charset=utf-8"},
        std::tuple{"/v1/history/changes", address_query + "&after=13",
                   "application/json; charset=utf-8"}}) {
    board.cursor.store(13);
    board.cursor_known.store(true);
    auto request = events_request(path, query);
    request.method = "HEAD";
    const auto head = events_router.handle(request);
    BOOST_TEST(head.status == 200, path);
    BOOST_TEST(has_header(head, std::string("Content-Type: ") + type), path);
    BOOST_TEST(has_header(head, "Cache-Control: no-store"), path);
    BOOST_TEST(head.head.find("X-Accel-Redirect") == std::string::npos, path);
    BOOST_TEST(head.head.find("Content-Length") == std::string::npos, path);
    BOOST_TEST(head.body.empty(), path);
  }
  BOOST_TEST(board.take_initial_state_requests().empty());
  // A HEAD is what a GET would be: refused as it would be, and a 404 for no record.
  auto refused = events_request("/v1/history/hash/events", hash_query);
  refused.method = "HEAD";
  refused.accept = {};
  BOOST_TEST(events_router.handle(refused).status == 406);
  const std::string no_record = "hash=" + std::string(64, 'b');
  auto missing = events_request("/v1/history/hash/events", no_record);
  missing.method = "HEAD";
  BOOST_TEST(events_router.handle(missing).status == 404);
  // The GET is handed over, its state asked for.
  const auto get = get_events("/v1/history/hash/events", hash_query, "");
  BOOST_TEST(has_header(get, "X-Accel-Redirect: /connector-events/record/" + std::string(64, 'a')));
  BOOST_TEST(board.take_initial_state_requests() == std::vector<std::uint64_t>{42},
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(while_nchan_is_full_or_silent_nothing_is_handed_over_or_asked_for) {
  board.cursor.store(13);
  board.cursor_known.store(true);
  // nchan's memory full (refusals), or the events nginx not answering the publisher at all.
  const std::function<void(bool)> conditions[] = {
      [this](bool on) { board.store_full_until_ms.store(on ? util::monotonic_ms() + 60000 : 0); },
      [this](bool on) { board.events_nginx_answers.store(!on); }};
  for (const auto& condition : conditions) {
    condition(true);
    // A stream is told to come back shortly (an empty stream: a 503 would end an EventSource).
    for (const auto& [path, query] : {std::pair{"/v1/history/hash/events", hash_query},
                                      std::pair{"/v1/history/events", address_query}}) {
      const auto response = get_events(path, query, "");
      BOOST_TEST(response.status == 200, path);
      BOOST_TEST(response.head.find("X-Accel-Redirect") == std::string::npos, path);
      BOOST_TEST(std::string(response.body) == "retry: 3000\n: again shortly\n\n", path);
    }
    BOOST_TEST(board.take_initial_state_requests().empty());
    // A long-poll that would wait: a 503 with Retry-After.
    const std::string poll_query = address_query + "&after=13";
    auto poll = events_request("/v1/history/changes", poll_query);
    const auto waiting = events_router.handle(poll);
    BOOST_TEST(waiting.status == 503);
    BOOST_TEST(has_header(waiting, "Retry-After: 1"));
    condition(false);
    BOOST_TEST(has_header(get_events("/v1/history/events", address_query, ""),
                          "X-Accel-Redirect: /connector-events/address/0x" + std::string(40, 'd')));
  }
}

BOOST_AUTO_TEST_CASE(a_last_event_id_that_is_not_a_seq_is_a_400) {
  for (const std::string_view id : {"abc", "-1", "1:2", "18446744073709551616", " 7"}) {
    const auto response = get_events("/v1/history/hash/events", hash_query, id);
    BOOST_TEST(response.status == 400, id);
    const std::string body(response.body);
    BOOST_TEST(body.find("\"code\":\"invalid_parameter\"") != std::string::npos, body);
    BOOST_TEST(body.find("\"param\":\"Last-Event-ID\"") != std::string::npos, body);
  }
  BOOST_TEST(history.asked == "");
}

BOOST_AUTO_TEST_SUITE_END()

// How many filters of a history filter are set.
int filters_set(const db::HistoryFilter& f) {
  return static_cast<int>(std::count_if(f.values.begin(), f.values.end(), [](const db::Param& v) {
    return !std::holds_alternative<std::monostate>(v);
  }));
}

// Every filter of /v1/history's description reaches the history reader and its statements: a
// value for it alone sets its own row's value of the reader's filter (db::kHistoryFilters) and no
// other, and that value, as the row's kind binds it, is the only one bound in the page statement.
// And the description has a parameter for every row. A kind whose parameter kind or binding
// (api/history.cpp) is wrong fails here.
BOOST_FIXTURE_TEST_CASE(every_described_history_filter_reaches_the_statements, Fixture) {
  using api::ParamKind;
  // A valid value of each kind, and how the statements bind it.
  const std::map<ParamKind, std::pair<std::string, db::Param>> valid = {
      {ParamKind::kUint64, {"7", std::uint64_t{7}}},
      {ParamKind::kAddress, {"0x" + std::string(40, 'A'), "0x" + std::string(40, 'a')}},
      {ParamKind::kTxHash, {"0x" + std::string(64, 'B'), "0x" + std::string(64, 'b')}},
      {ParamKind::kSlug, {"unitiot", std::uint64_t{2}}},
      {ParamKind::kHistoryStatus, {"pending", std::string("Pending")}},
  };
  std::size_t filters = 0;
  for (const auto& param : api::kHistoryEndpoint.params) {
    if (param.name == "page_id" || param.name == "page_size" || param.name == "order") continue;
    const std::size_t row = db::history_filter(param.name);  // throws for a name without a row
    BOOST_TEST(row == filters, param.name);                  // in the rows' order
    ++filters;
    history.filter.reset();
    const auto& [value, bound_as] = valid.at(param.kind);
    get("/v1/history", std::string(param.name) + "=" + value, api::kHistoryCacheControl);
    BOOST_TEST_REQUIRE(history.filter.has_value());
    const auto& f = *history.filter;
    BOOST_TEST(filters_set(f) == 1, param.name);
    BOOST_TEST((f.values[row] == bound_as), param.name);
    const auto statement = db::page_statement(
        db::choose_access_path(f), f, domain::SortOrder::kDescending, db::PageForm::kDirect);
    const auto bound = std::count_if(statement.params.begin(), statement.params.end(),
                                     [](const db::Param& p) { return p.index() != 0; });
    const auto bound_value = std::count(statement.params.begin(), statement.params.end(), bound_as);
    // The value (as a driving value, a residual pair or both) and the count's copy of it;
    // nothing else bound (LIMIT and OFFSET come after the statement's own).
    BOOST_TEST(bound_value >= 2, param.name);
    BOOST_TEST(bound == bound_value, param.name);
  }
  BOOST_TEST(filters == db::kHistoryFilterCount);
}
