// What a delivery carries (webhooks/delivery_body.h): its event type, its event id, and its body
// byte for byte, the record in it being exactly GET /v1/history/hash's answer for it.
#define BOOST_TEST_MODULE webhook_body
#include <rapidjson/document.h>

#include <boost/test/unit_test.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "domain/history.h"
#include "domain/reference_data.h"
#include "json/history_writer.h"
#include "json/json_writer.h"
#include "webhooks/delivery_body.h"

using namespace connector;
using domain::HistoryStatus;

namespace {

domain::Chain chain(std::uint16_t ref, std::string slug, std::string network,
                    std::uint64_t chain_id, std::string base_chain) {
  domain::Chain c;
  c.ref = ref;
  c.slug = std::move(slug);
  c.network = std::move(network);
  c.chain_id = chain_id;
  c.base_chain = std::move(base_chain);
  return c;
}

const std::string kTokenAddress = "0x3c5e7a9b1d2F4A6C8E0B2d4f6a8c0E1B3d5F7A9c";

// Two chains, the coin of the first and a token of the second.
domain::ReferenceData reference() {
  domain::ReferenceData data;
  data.chains = {chain(1, "unitcore", "UNITCore", 36888, "MainBase"),
                 chain(2, "unitiot", "UNITIoT", 1012, "SideBase")};
  data.assets = {{1, 1, "", "UNIT", "UNIT", 18, "Coin"},
                 {2, 2, kTokenAddress, "Wrapped UNIT", "WUNIT", 6, "ERC-20"}};
  data.connects = {{1, 2}};
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
  r.destination_block_number = "200";
  r.source_block_timestamp = "1700000000";
  r.destination_block_timestamp = "1700000060";
  r.source_tx_hash = "0x" + std::string(64, 'e');
  r.destination_tx_hash = "0x" + std::string(64, 'f');
  r.source_amount = "1500000000000000000";
  r.destination_amount = "1490000";
  r.fee = "10000000000000000";
  r.status = HistoryStatus::kConfirmed;
  return r;
}

// What json::write_record_answer writes for the record: GET /v1/history/hash's body.
std::string record_answer(const domain::HistoryRecord& r, const domain::ReferenceData& data) {
  rapidjson::StringBuffer buffer;
  json::JsonWriter w(buffer);
  json::write_record_answer(w, r, data);
  return {buffer.GetString(), buffer.GetSize()};
}

// The record's answer written out by hand.
const std::string kRecordJson =
    R"({"id":"42","hash":")" + std::string(64, 'a') +
    R"(","pair_id":7,)"
    R"("source_slug":"unitcore","source_network":"UNITCore","source_chain_id":"36888",)"
    R"("source_base_chain":"MainBase",)"
    R"("destination_slug":"unitiot","destination_network":"UNITIoT",)"
    R"("destination_chain_id":"1012","destination_base_chain":"SideBase",)"
    R"("source_deposit_address":"0x)" +
    std::string(40, 'b') + R"(","source_sender":"0x)" + std::string(40, 'c') +
    R"(","destination_address":"0x)" + std::string(40, 'd') +
    R"(","source_block_number":"100","destination_block_number":"200",)"
    R"("source_block_timestamp":"1700000000","destination_block_timestamp":"1700000060",)"
    R"("source_tx_hash":"0x)" +
    std::string(64, 'e') + R"(","destination_tx_hash":"0x)" + std::string(64, 'f') +
    R"(","source_asset_id":"1","destination_asset_id":"2",)"
    R"("source_asset_address":"","destination_asset_address":")" +
    kTokenAddress +
    R"(","source_asset_name":"UNIT","destination_asset_name":"Wrapped UNIT",)"
    R"("source_asset_symbol":"UNIT","destination_asset_symbol":"WUNIT",)"
    R"("source_asset_decimals":18,"destination_asset_decimals":6,)"
    R"("source_asset_type":"Coin","destination_asset_type":"ERC-20",)"
    R"("source_amount":"1.5","destination_amount":"1.49","fee":"0.01","status":"Confirmed",)"
    R"("status_message":"The transfer is complete: the payout is confirmed on the destination )"
    R"(chain."})";

}  // namespace

BOOST_AUTO_TEST_CASE(the_event_type_is_transfer_and_the_status_in_lower_case) {
  BOOST_TEST(webhooks::event_type(HistoryStatus::kDeposit) == "transfer.deposit");
  BOOST_TEST(webhooks::event_type(HistoryStatus::kPending) == "transfer.pending");
  BOOST_TEST(webhooks::event_type(HistoryStatus::kConfirmed) == "transfer.confirmed");
  BOOST_TEST(webhooks::event_type(HistoryStatus::kError) == "transfer.error");
}

BOOST_AUTO_TEST_CASE(the_event_id_is_the_subscription_and_the_seq) {
  BOOST_TEST(webhooks::event_id(7, 123) == "7-123");
  BOOST_TEST(webhooks::event_id(0, 0) == "0-0");
  BOOST_TEST(webhooks::event_id(18'446'744'073'709'551'615ULL, 1) == "18446744073709551615-1");
  BOOST_TEST(webhooks::event_id(1, 18'446'744'073'709'551'615ULL) == "1-18446744073709551615");
}

BOOST_AUTO_TEST_CASE(the_record_is_the_by_hash_answer) {
  BOOST_TEST(record_answer(record(), reference()) == kRecordJson);
}

BOOST_AUTO_TEST_CASE(the_body_is_one_line_with_its_members_in_order) {
  const std::string body = webhooks::delivery_body(record(), 123, 7, 1, reference());
  BOOST_TEST(body == R"({"event":"transfer.confirmed","seq":123,"subscription":7,"attempt":1,)"
                     R"("record":)" +
                         kRecordJson + "}");
}

BOOST_AUTO_TEST_CASE(each_attempt_and_status_changes_only_its_own_members) {
  auto r = record();
  r.status = HistoryStatus::kError;
  r.status_message = "node said \"no\" \\ twice";
  const auto data = reference();
  const std::string body =
      webhooks::delivery_body(r, 18'446'744'073'709'551'615ULL, 9, 4'294'967'295U, data);
  BOOST_TEST(body == R"({"event":"transfer.error","seq":18446744073709551615,"subscription":9,)"
                     R"("attempt":4294967295,"record":)" +
                         record_answer(r, data) + "}");
  // The record as written, escapes included, and the whole one valid JSON object.
  BOOST_TEST(body.find(R"("status":"Error","status_message":"node said \"no\" \\ twice"})") !=
             std::string::npos);
  BOOST_TEST(body.find('\n') == std::string::npos);
  rapidjson::Document doc;
  doc.Parse(body.data(), body.size());
  BOOST_REQUIRE(!doc.HasParseError());
  std::vector<std::string> names;
  for (const auto& m : doc.GetObject()) names.emplace_back(m.name.GetString());
  BOOST_TEST(names ==
             (std::vector<std::string>{"event", "seq", "subscription", "attempt", "record"}));
  BOOST_TEST(std::string(doc["record"]["status_message"].GetString()) == r.status_message);
}

BOOST_AUTO_TEST_CASE(a_record_of_an_unknown_asset_is_refused) {
  auto r = record();
  r.destination_asset_id = 3;
  BOOST_CHECK_THROW(webhooks::delivery_body(r, 1, 1, 1, reference()), std::logic_error);
}
