#define BOOST_TEST_MODULE test_params
#include <boost/test/unit_test.hpp>

#include <cstdint>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>

#include "api/params.h"
#include "api_error_check.h"
#include "http/api_error.h"

using namespace connector;
using namespace connector::api;

namespace {

// Checks that f throws 400 invalid_parameter for `param`, with a message that names it.
template <typename F>
void check_invalid(F&& f, const std::string& param) {
  const auto thrown = api_error_of(f);
  BOOST_REQUIRE(thrown.has_value());
  BOOST_TEST(thrown->status == 400);
  BOOST_TEST(thrown->code == "invalid_parameter");
  BOOST_TEST(thrown->param == param);
  BOOST_TEST(thrown->message.starts_with(param + " "));
}

const std::string kHex64 = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
const std::string kHex64Upper = "0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF";
const std::string kHex64Mixed = "0123456789aBcDeF0123456789AbCdEf0123456789abcdef0123456789ABCDEF";
// U+FF41 FULLWIDTH LATIN SMALL LETTER A and U+FF10 FULLWIDTH DIGIT ZERO, three bytes each.
const std::string kFullwidthA = "\xEF\xBD\x81";
const std::string kFullwidthZero = "\xEF\xBC\x90";
const std::string kFullwidthX = "\xEF\xBD\x98";

domain::ReferenceData two_chains() {
  domain::ReferenceData data;
  domain::Chain core;
  core.ref = 1;
  core.slug = "unitcore";
  core.network = "UNITCore";
  core.chain_id = 36888;
  core.base_chain = "MainBase";
  domain::Chain iot;
  iot.ref = 2;
  iot.slug = "unitiot";
  iot.network = "UNITIoT";
  iot.chain_id = 1012;
  iot.base_chain = "SideBase";
  data.chains = {core, iot};
  return data;
}

}  // namespace

BOOST_AUTO_TEST_CASE(parse_uint64_accepts_unsigned_decimals) {
  const struct {
    std::string text;
    std::uint64_t value;
  } cases[] = {
      {"0", 0},
      {"000", 0},
      {"1", 1},
      {"007", 7},
      {"4294967296", 4294967296ULL},
      {"18446744073709551614", 18446744073709551614ULL},
      {"18446744073709551615", UINT64_MAX},
      {"0000018446744073709551615", UINT64_MAX},
  };
  for (const auto& c : cases) {
    BOOST_TEST_CONTEXT("'" << c.text << "'") {
      BOOST_TEST(parse_uint64("page_id", c.text) == c.value);
    }
  }
}

BOOST_AUTO_TEST_CASE(parse_uint64_rejects_with_the_name_passed) {
  for (const std::string name : {"page_id", "source_asset_id", "pair_id"}) {
    for (const std::string text :
         {"18446744073709551616", "18446744073709551620", "99999999999999999999",
          "184467440737095516150", "-1", "-0", "+1", " 1", "1 ", "1.0", "", "1e3", "0x1", "abc",
          "1_000", "1,000", "\xEF\xBC\x91" /* fullwidth 1 */}) {
      BOOST_TEST_CONTEXT(name << " = '" << text << "'") {
        check_invalid([&] { parse_uint64(name, text); }, name);
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(parse_page_size_defaults_and_caps) {
  const struct {
    std::string text;
    std::uint32_t size;
  } cases[] = {
      {"0", 20},
      {"000", 20},
      {"1", 1},
      {"20", 20},
      {"99", 99},
      {"100", 100},
      {"0100", 100},
      {"101", 100},
      {"4294967297", 100},  // 2^32 + 1: capped, not truncated to 1
      {"18446744073709551615", 100},
  };
  for (const auto& c : cases) {
    BOOST_TEST_CONTEXT("'" << c.text << "'") {
      BOOST_TEST(parse_page_size("page_size", c.text) == c.size);
    }
  }
}

BOOST_AUTO_TEST_CASE(parse_page_size_rejects) {
  for (const std::string text : {"", "-1", "abc", "1.5", "18446744073709551616"}) {
    BOOST_TEST_CONTEXT("'" << text << "'") {
      check_invalid([&] { parse_page_size("page_size", text); }, "page_size");
    }
  }
}

BOOST_AUTO_TEST_CASE(parse_address_accepts_any_case) {
  const std::string lower = "0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed";
  for (const std::string& text : {lower, std::string("0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"),
                                  std::string("0x5AAEB6053F3E94C9B9A09F33669435E7EF1BEAED")}) {
    BOOST_TEST_CONTEXT(text) {
      const chain::Address address = parse_address("source_sender", text);
      BOOST_TEST(address.lower() == lower);
      BOOST_TEST(address.checksummed() == "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed");
    }
  }
}

BOOST_AUTO_TEST_CASE(parse_address_rejects) {
  const std::string hex40 = "5aaeb6053f3e94c9b9a09f33669435e7ef1beaed";
  for (const std::string& text :
       {std::string(), hex40, "0X" + hex40, "0x" + hex40.substr(1), "0x" + hex40 + "0",
        "0x" + hex40.substr(1) + "g", " 0x" + hex40.substr(1), "0x" + hex40.substr(3) + kFullwidthA,
        "0x0x" + hex40.substr(2)}) {
    BOOST_TEST_CONTEXT("'" << text << "'") {
      check_invalid([&] { parse_address("destination_address", text); }, "destination_address");
    }
  }
}

BOOST_AUTO_TEST_CASE(parse_tx_hash_lower_cases) {
  const struct {
    std::string text, parsed;
  } cases[] = {
      {"0x" + kHex64, "0x" + kHex64},
      {"0x" + kHex64Upper, "0x" + kHex64},
      {"0x" + kHex64Mixed, "0x" + kHex64},
  };
  for (const auto& c : cases) {
    BOOST_TEST_CONTEXT(c.text) { BOOST_TEST(parse_tx_hash("source_tx_hash", c.text) == c.parsed); }
  }
}

BOOST_AUTO_TEST_CASE(parse_tx_hash_rejects) {
  const std::string cases[] = {
      "",
      "0x",
      "0x" + kHex64.substr(1),                   // 65 characters
      "0x" + kHex64 + "0",                       // 67 characters
      kHex64,                                    // no 0x
      "00" + kHex64,                             // 66 characters, no 0x
      "0X" + kHex64,                             // upper-case prefix
      "0x" + kHex64.substr(1) + "g",             // not hex
      "0x" + kHex64.substr(1) + " ",             // trailing space
      "0x" + kHex64.substr(3) + kFullwidthA,     // 66 bytes, a fullwidth look-alike
      "0x" + kHex64.substr(3) + kFullwidthZero,  // 66 bytes, a fullwidth look-alike
      "0" + kFullwidthX + kHex64.substr(2),      // 66 bytes, a fullwidth x
  };
  for (const std::string& text : cases) {
    BOOST_TEST_CONTEXT("'" << text << "' (" << text.size() << " bytes)") {
      check_invalid([&] { parse_tx_hash("destination_tx_hash", text); }, "destination_tx_hash");
    }
  }
}

BOOST_AUTO_TEST_CASE(parse_record_hash_accepts_any_case_and_prefix) {
  for (const std::string& text : {kHex64, kHex64Upper, kHex64Mixed, "0x" + kHex64,
                                  "0x" + kHex64Upper, "0X" + kHex64, "0X" + kHex64Mixed}) {
    BOOST_TEST_CONTEXT(text) { BOOST_TEST(parse_record_hash("hash", text) == kHex64); }
  }
}

BOOST_AUTO_TEST_CASE(parse_record_hash_rejects) {
  const std::string cases[] = {
      "",
      "0x",
      kHex64.substr(1),
      kHex64 + "0",
      "0x" + kHex64.substr(1),
      "0x" + kHex64 + "0",
      "0x0x" + kHex64.substr(2),
      "x" + kHex64,
      " " + kHex64,
      kHex64.substr(1) + "g",
      kHex64.substr(3) + kFullwidthA,  // 64 bytes, a fullwidth look-alike
  };
  for (const std::string& text : cases) {
    BOOST_TEST_CONTEXT("'" << text << "'") {
      check_invalid([&] { parse_record_hash("hash", text); }, "hash");
    }
  }
}

BOOST_AUTO_TEST_CASE(parse_slug_finds_a_chain_of_the_deployment) {
  const domain::ReferenceData data = two_chains();
  BOOST_TEST(parse_slug("source_blockchain", "unitcore", data).ref == 1);
  BOOST_TEST(parse_slug("source_blockchain", "unitiot", data).ref == 2);
  BOOST_TEST(parse_slug("source_blockchain", "unitiot", data).network == "UNITIoT");
  // The very object of the reference data, not a copy.
  BOOST_TEST(&parse_slug("destination_blockchain", "unitiot", data) == &data.chains[1]);
}

BOOST_AUTO_TEST_CASE(parse_slug_rejects_unknown_slugs_listing_the_known_ones) {
  const domain::ReferenceData data = two_chains();
  for (const std::string text :
       {"", "UNITCore", "UnitIoT", "unitcoretestnet", "unitcore ", "unit"}) {
    BOOST_TEST_CONTEXT("'" << text << "'") {
      const auto thrown = api_error_of([&] { parse_slug("destination_blockchain", text, data); });
      BOOST_REQUIRE(thrown.has_value());
      BOOST_TEST(thrown->status == 400);
      BOOST_TEST(thrown->code == "invalid_parameter");
      BOOST_TEST(thrown->param == "destination_blockchain");
      BOOST_TEST(thrown->message ==
                 "destination_blockchain must be the slug of a chain of this service: unitcore, "
                 "unitiot");
    }
  }
}

BOOST_AUTO_TEST_CASE(parse_status_is_case_insensitive_and_canonical) {
  const struct {
    std::string text;
    std::string_view canonical;
  } cases[] = {
      {"Deposit", "Deposit"},     {"deposit", "Deposit"}, {"DEPOSIT", "Deposit"},
      {"pending", "Pending"},     {"PeNdInG", "Pending"}, {"confirmed", "Confirmed"},
      {"CONFIRMED", "Confirmed"}, {"error", "Error"},     {"eRRoR", "Error"},
  };
  for (const auto& c : cases) {
    BOOST_TEST_CONTEXT("'" << c.text << "'") {
      BOOST_TEST(connector::domain::status_name(parse_status("status", c.text)) == c.canonical);
    }
  }
}

BOOST_AUTO_TEST_CASE(parse_status_rejects) {
  for (const std::string text :
       {"", "Confirm", "Confirmed ", " Error", "OK", "Deposits", "Failed", "0"}) {
    BOOST_TEST_CONTEXT("'" << text << "'") {
      check_invalid([&] { parse_status("status", text); }, "status");
    }
  }
}

BOOST_AUTO_TEST_CASE(parse_order_is_case_insensitive) {
  for (const std::string text : {"ASC", "asc", "Asc", "aSC"}) {
    BOOST_TEST_CONTEXT(text) {
      BOOST_TEST((parse_order("order", text) == domain::SortOrder::kAscending));
    }
  }
  for (const std::string text : {"DESC", "desc", "Desc", "dEsC"}) {
    BOOST_TEST_CONTEXT(text) {
      BOOST_TEST((parse_order("order", text) == domain::SortOrder::kDescending));
    }
  }
}

BOOST_AUTO_TEST_CASE(messages_never_echo_the_value) {
  const std::string hostile = "<script>alert(1)</script>" + std::string(4000, 'z');
  const domain::ReferenceData data = two_chains();
  const std::optional<Thrown> thrown[] = {
      api_error_of([&] { parse_uint64("page_id", hostile); }),
      api_error_of([&] { parse_page_size("page_size", hostile); }),
      api_error_of([&] { parse_address("source_sender", hostile); }),
      api_error_of([&] { parse_tx_hash("source_tx_hash", hostile); }),
      api_error_of([&] { parse_record_hash("hash", hostile); }),
      api_error_of([&] { parse_slug("source_blockchain", hostile, data); }),
      api_error_of([&] { parse_status("status", hostile); }),
      api_error_of([&] { parse_order("order", hostile); }),
  };
  for (std::size_t i = 0; i < std::size(thrown); ++i) {
    BOOST_TEST_CONTEXT("validator #" << i) {
      BOOST_REQUIRE(thrown[i].has_value());
      BOOST_TEST(thrown[i]->message.find("script") == std::string::npos);
      BOOST_TEST(thrown[i]->message.size() < 200u);
    }
  }
}

BOOST_AUTO_TEST_CASE(parse_order_rejects) {
  for (const std::string text :
       {"", "ascending", "descending", "up", " ASC", "ASC ", "AS", "DES", "1", "-1"}) {
    BOOST_TEST_CONTEXT("'" << text << "'") {
      check_invalid([&] { parse_order("order", text); }, "order");
    }
  }
}
