// The endpoints answered from the reference data and the refreshed copies (networks, connects,
// pairs, account, ab, readyz): their 200 answers through the router, on endpoint_fakes.h.
#define BOOST_TEST_MODULE test_endpoints_reference
#include <boost/test/unit_test.hpp>
#include <string>

#include "endpoint_fakes.h"

using namespace connector;
using namespace connector::fakes;

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
