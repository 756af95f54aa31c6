#define BOOST_TEST_MODULE test_amount
#include <boost/test/unit_test.hpp>

#include <optional>
#include <stdexcept>
#include <string>

#include "chain/amount.h"

using namespace connector::chain;

namespace {

const std::string kMax(kUint256Max);
// 2^256, one past the largest amount.
const std::string kTwoTo256 =
    "115792089237316195423570985008687907853269984665640564039457584007913129639936";

struct FormatCase {
  std::string base_units;
  int decimals;
  std::string whole_units;
};

const FormatCase kFormatCases[] = {
    {"88450000000000000000", 18, "88.45"},
    {"0", 18, "0"},
    {"0", 0, "0"},
    {"1", 18, "0.000000000000000001"},
    {"1000000000000000000", 18, "1"},
    {"10", 0, "10"},
    {"10", 1, "1"},
    {"100", 18, "0.0000000000000001"},
    {"1500000", 6, "1.5"},
    {"1500001", 6, "1.500001"},
    {"123456789", 8, "1.23456789"},
    {"123", 3, "0.123"},
    {"120", 3, "0.12"},
    {kMax, 18, "115792089237316195423570985008687907853269984665640564039457.584007913129639935"},
    {kMax, 0, kMax},
};

// Optionals as text, so Boost.Test can print both sides of a failed comparison.
std::string shown(const std::optional<std::string>& value) { return value.value_or("<none>"); }
std::string shown(const std::optional<std::uint64_t>& value) {
  return value ? std::to_string(*value) : "<none>";
}

}  // namespace

BOOST_AUTO_TEST_CASE(format_units_table) {
  for (const FormatCase& c : kFormatCases) {
    BOOST_TEST_CONTEXT(c.base_units << " / " << c.decimals) {
      BOOST_TEST(format_units(c.base_units, c.decimals) == c.whole_units);
    }
  }
}

BOOST_AUTO_TEST_CASE(append_units_appends_the_same_text) {
  for (const FormatCase& c : kFormatCases) {
    BOOST_TEST_CONTEXT(c.base_units << " / " << c.decimals) {
      std::string out = "\"";
      append_units(out, c.base_units, c.decimals);
      BOOST_TEST(out == "\"" + std::string(c.whole_units));
    }
  }
}

BOOST_AUTO_TEST_CASE(negative_decimals_are_refused) {
  // Outside the header's 0-18 contract: never a silently wrong amount.
  BOOST_CHECK_THROW(format_units("1", -1), std::out_of_range);
  std::string out;
  BOOST_CHECK_THROW(append_units(out, "1", -1), std::out_of_range);
  BOOST_TEST(out.empty());
  BOOST_TEST(!parse_units("1", -1).has_value());
}

BOOST_AUTO_TEST_CASE(parse_units_round_trips) {
  for (const FormatCase& c : kFormatCases) {
    BOOST_TEST_CONTEXT(c.whole_units << " / " << c.decimals) {
      const auto parsed = parse_units(c.whole_units, c.decimals);
      BOOST_REQUIRE(parsed.has_value());
      BOOST_TEST(*parsed == c.base_units);
    }
  }
}

BOOST_AUTO_TEST_CASE(parse_units_accepts_padding_zeros) {
  BOOST_TEST(shown(parse_units("007.50", 6)) == "7500000");
  BOOST_TEST(shown(parse_units("88.450000000000000000", 18)) == "88450000000000000000");
  BOOST_TEST(shown(parse_units("0.000", 18)) == "0");
  BOOST_TEST(shown(parse_units("000", 0)) == "0");
}

BOOST_AUTO_TEST_CASE(parse_units_rejections) {
  const struct {
    std::string text;
    int decimals;
  } cases[] = {
      {"", 18},
      {".", 18},
      {"1.", 18},
      {".5", 18},
      {"-1", 18},
      {"+1", 18},
      {"1e5", 18},
      {"1E5", 18},
      {" 1", 18},
      {"1 ", 18},
      {"0x10", 18},
      {"1.2.3", 18},
      {"1,5", 18},
      {"1.5", 0},
      {"1.0", 0},
      {"1.0000000000000000001", 18},
      {kTwoTo256, 0},
      {"115792089237316195423570985008687907853269984665640564039457.584007913129639936", 18},
  };
  for (const auto& c : cases) {
    BOOST_TEST_CONTEXT("'" << c.text << "' / " << c.decimals) {
      BOOST_TEST(!parse_units(c.text, c.decimals).has_value());
    }
  }
}

BOOST_AUTO_TEST_CASE(canonical_base_units_cases) {
  BOOST_TEST(shown(canonical_base_units("000")) == "0");
  BOOST_TEST(shown(canonical_base_units("0")) == "0");
  BOOST_TEST(shown(canonical_base_units("0042")) == "42");
  BOOST_TEST(shown(canonical_base_units(kMax)) == kMax);
  BOOST_TEST(shown(canonical_base_units("000" + kMax)) == kMax);
  BOOST_TEST(!canonical_base_units(kTwoTo256).has_value());
  BOOST_TEST(!canonical_base_units(kMax + "0").has_value());
  BOOST_TEST(!canonical_base_units("12a").has_value());
  BOOST_TEST(!canonical_base_units("").has_value());
  BOOST_TEST(!canonical_base_units("-1").has_value());
  BOOST_TEST(!canonical_base_units("1.0").has_value());
}

BOOST_AUTO_TEST_CASE(format_fee_percent_cases) {
  BOOST_TEST(format_fee_percent(30000000) == "30.000000");
  BOOST_TEST(format_fee_percent(0) == "0.000000");
  BOOST_TEST(format_fee_percent(1) == "0.000001");
  BOOST_TEST(format_fee_percent(300000) == "0.300000");
  BOOST_TEST(format_fee_percent(10000000000) == "10000.000000");
}

BOOST_AUTO_TEST_CASE(parse_fee_percent_accepts) {
  BOOST_TEST(shown(parse_fee_percent("30")) == "30000000");
  BOOST_TEST(shown(parse_fee_percent("30.5")) == "30500000");
  BOOST_TEST(shown(parse_fee_percent("0.3")) == "300000");
  BOOST_TEST(shown(parse_fee_percent("30.000000")) == "30000000");
  BOOST_TEST(shown(parse_fee_percent("0")) == "0");
  BOOST_TEST(shown(parse_fee_percent("0.000001")) == "1");
  BOOST_TEST(shown(parse_fee_percent("10000")) == "10000000000");
  BOOST_TEST(shown(parse_fee_percent("10000.000000")) == "10000000000");
  BOOST_TEST(shown(parse_fee_percent("0030")) == "30000000");
}

BOOST_AUTO_TEST_CASE(parse_fee_percent_rejects) {
  for (const char* text : {"10000.000001", "10001", "1.0000001", "-1", "+1", "", "abc", "1e2", ".5",
                           "1.", "1 ", " 1", "99999999999999999999999999"}) {
    BOOST_TEST_CONTEXT("'" << text << "'") { BOOST_TEST(!parse_fee_percent(text).has_value()); }
  }
}

BOOST_AUTO_TEST_CASE(fee_percent_round_trips) {
  for (std::uint64_t millionths :
       {0ULL, 1ULL, 300000ULL, 30000000ULL, 9999999999ULL, 10000000000ULL}) {
    BOOST_TEST(shown(parse_fee_percent(format_fee_percent(millionths))) ==
               std::to_string(millionths));
  }
}
