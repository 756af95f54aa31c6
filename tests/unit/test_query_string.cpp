#define BOOST_TEST_MODULE test_query_string
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "api_error_check.h"
#include "http/api_error.h"
#include "http/query_string.h"

using namespace connector::http;
using namespace std::string_literals;

namespace {

// Optionals as text, so Boost.Test can print both sides of a failed comparison.
std::string shown(const std::optional<std::string_view>& value) {
  return value ? "'" + std::string(*value) + "'" : "<none>";
}
std::string shown(const std::optional<std::string>& value) {
  return value ? "'" + *value + "'" : "<none>";
}

// Parses raw with every name that decodes as a known one: the splitting and decoding alone.
QueryParams parse_all(std::string_view raw) {
  static std::vector<std::string> names;
  names.clear();
  for (std::size_t start = 0; start <= raw.size();) {
    const std::size_t amp = std::min(raw.find('&', start), raw.size());
    const auto item = raw.substr(start, amp - start);
    start = amp + 1;
    if (const auto name = decode_component(item.substr(0, item.find('=')))) names.push_back(*name);
  }
  static std::vector<std::string_view> known;
  known.assign(names.begin(), names.end());
  return QueryParams::parse(raw, known);
}

// Bytes as \xNN escapes for test contexts (the inputs are often not printable).
std::string printable(std::string_view bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (char c : bytes) {
    const auto b = static_cast<unsigned char>(c);
    if (b >= 0x20 && b < 0x7f) {
      out.push_back(c);
    } else {
      out += "\\x";
      out.push_back(kHex[b >> 4]);
      out.push_back(kHex[b & 0xf]);
    }
  }
  return out;
}

struct DecodeCase {
  std::string raw;
  std::size_t size;
  std::vector<std::pair<std::string, std::optional<std::string>>> expected;  // name -> get()
};

const DecodeCase kDecodeCases[] = {
    {"", 0, {{"a", std::nullopt}}},
    {"a=1&b=2", 2, {{"a", "1"}, {"b", "2"}}},
    {"q=a+b", 1, {{"q", "a b"}}},
    {"q=a%2Bb", 1, {{"q", "a+b"}}},
    {"q=a%2bb", 1, {{"q", "a+b"}}},
    {"q=%41%62", 1, {{"q", "Ab"}}},
    {"q=100%25", 1, {{"q", "100%"}}},
    {"q=%26%3D", 1, {{"q", "&="}}},
    {"a%20b=c", 1, {{"a b", "c"}, {"a%20b", std::nullopt}}},
    {"a+b=c", 1, {{"a b", "c"}}},
    {"a==b", 1, {{"a", "=b"}}},
    {"a=1&&b=2", 2, {{"a", "1"}, {"b", "2"}}},
    {"&a=1&", 1, {{"a", "1"}}},
    {"&&&", 0, {{"a", std::nullopt}}},
    {"flag", 1, {{"flag", std::nullopt}}},
    {"flag&a=1", 2, {{"flag", std::nullopt}, {"a", "1"}}},
    {"status=", 1, {{"status", std::nullopt}}},
    {"status=&a=1", 2, {{"status", std::nullopt}, {"a", "1"}}},
    {"A=1", 1, {{"A", "1"}, {"a", std::nullopt}}},
    {"a=1", 1, {{"b", std::nullopt}}},
    {"=1", 1, {{"", "1"}}},
    {"name=J%C3%BCrgen", 1, {{"name", "J\xC3\xBCrgen"}}},
    {"name=J\xC3\xBCrgen", 1, {{"name", "J\xC3\xBCrgen"}}},
    {"cur=%e2%82%ac", 1, {{"cur", "\xE2\x82\xAC"}}},
    {"e=%f0%9f%98%80", 1, {{"e", "\xF0\x9F\x98\x80"}}},
    {"max=%f4%8f%bf%bf", 1, {{"max", "\xF4\x8F\xBF\xBF"}}},
    {"%c3%a9t%c3%a9=1", 1, {{"\xC3\xA9t\xC3\xA9", "1"}}},
};

}  // namespace

BOOST_AUTO_TEST_CASE(parse_decodes_form_urlencoded_items) {
  for (const DecodeCase& c : kDecodeCases) {
    BOOST_TEST_CONTEXT("query '" << printable(c.raw) << "'") {
      const QueryParams params = parse_all(c.raw);
      BOOST_TEST(params.size() == c.size);
      for (const auto& [name, value] : c.expected) {
        BOOST_TEST_CONTEXT("get('" << printable(name) << "')") {
          BOOST_TEST(shown(params.get(name)) == shown(value));
        }
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(undecodable_values_are_400_invalid_parameter_naming_the_param) {
  const std::string cases[] = {
      "p=%",         "p=%4",           "p=a%",           "p=a%4",
      "p=%zz",       "p=%G1",          "p=%4g",          "p=%%",
      "p=%%41",      "p=%00",          "p=a%00b",        "p=a\0b"s,
      "p=\0"s,       "p=%ff",          "p=\xff",         "p=%80",
      "p=%c3",       "p=%c3%28",       "p=%e2%82",       "p=%c0%af",
      "p=%c1%bf",    "p=%e0%80%af",    "p=%f0%80%80%af", "p=%ed%a0%80",
      "p=%ed%bf%bf", "p=%f4%90%80%80", "p=%f5%80%80%80", "a=1&p=%zz",
  };
  for (const std::string& raw : cases) {
    BOOST_TEST_CONTEXT("query '" << printable(raw) << "'") {
      const auto thrown = api_error_of([&] { parse_all(raw); });
      BOOST_REQUIRE(thrown.has_value());
      BOOST_TEST(thrown->status == 400);
      BOOST_TEST(thrown->code == "invalid_parameter");
      BOOST_TEST(thrown->param == "p");
      BOOST_TEST(thrown->message.starts_with("p "));
    }
  }
}

BOOST_AUTO_TEST_CASE(undecodable_names_are_ignored_like_any_unknown_name) {
  static constexpr std::string_view kKnown[] = {"page_id"};
  for (const std::string& raw :
       {"%zz=1"s, "%=1"s, "%00=1"s, "a\0=1"s, "%ff=1"s, "%ed%a0%80"s, "%"s, "%zz=%zz"s}) {
    BOOST_TEST_CONTEXT("query '" << printable(raw) << "'") {
      const QueryParams params = QueryParams::parse(raw + "&page_id=7", kKnown);
      BOOST_TEST(params.size() == 1u);
      BOOST_TEST(shown(params.get("page_id")) == "'7'");
    }
  }
}

BOOST_AUTO_TEST_CASE(unknown_names_are_dropped_whatever_their_value) {
  static constexpr std::string_view kKnown[] = {"status"};
  // An unknown name is never kept, so no error can repeat it: not even with an undecodable
  // value, a repetition, or a bidi override in it.
  const QueryParams params =
      QueryParams::parse("%E2%80%AESEND%20TO%200xdead=%ZZ&x=1&x=2&status=Error&Status=%00", kKnown);
  BOOST_TEST(params.size() == 1u);
  BOOST_TEST(shown(params.get("status")) == "'Error'");
  BOOST_TEST(shown(params.get("x")) == "<none>");
}

BOOST_AUTO_TEST_CASE(query_of_4096_bytes_is_accepted) {
  const std::string raw = "a=" + std::string(kMaxQueryStringBytes - 2, 'x');
  BOOST_REQUIRE(raw.size() == 4096u);
  const QueryParams params = parse_all(raw);
  BOOST_TEST(params.size() == 1u);
  BOOST_TEST(params.get("a").value_or("").size() == 4094u);
}

BOOST_AUTO_TEST_CASE(query_of_4097_bytes_is_414_query_too_long) {
  for (const std::string& raw :
       {"a=" + std::string(4095, 'x'), std::string(4097, '&'), "a=" + std::string(100000, 'x')}) {
    BOOST_TEST_CONTEXT(raw.size() << " bytes") {
      const auto thrown = api_error_of([&] { parse_all(raw); });
      BOOST_REQUIRE(thrown.has_value());
      BOOST_TEST(thrown->status == 414);
      BOOST_TEST(thrown->code == "query_too_long");
      BOOST_TEST(thrown->param == "");
    }
  }
}

BOOST_AUTO_TEST_CASE(get_throws_duplicate_parameter_for_a_repeated_name) {
  for (const std::string raw :
       {"status=a&status=b", "status=a&status=a", "status=&status=", "status=&status=x",
        "status&status", "status=x&status", "status=a&b=1&status=b", "st%61tus=a&status=b"}) {
    BOOST_TEST_CONTEXT("query '" << raw << "'") {
      const QueryParams params = parse_all(raw);
      const auto thrown = api_error_of([&] { params.get("status"); });
      BOOST_REQUIRE(thrown.has_value());
      BOOST_TEST(thrown->status == 400);
      BOOST_TEST(thrown->code == "duplicate_parameter");
      BOOST_TEST(thrown->param == "status");
    }
  }
}

BOOST_AUTO_TEST_CASE(get_of_another_name_ignores_a_repeated_one) {
  const QueryParams params = parse_all("_=1&_=2&page_id=3");
  BOOST_TEST(shown(params.get("page_id")) == "'3'");
  BOOST_TEST(params.size() == 3u);
}

BOOST_AUTO_TEST_CASE(reject_duplicates_checks_only_known_names) {
  static constexpr std::string_view kKnown[] = {"a", "b"};
  const struct {
    std::string raw;
    std::optional<std::string> duplicate;  // the param of the expected error
  } cases[] = {
      {"", std::nullopt},
      {"a=1&b=2", std::nullopt},
      {"a=1&b=2&c=3&c=4", std::nullopt},
      {"_=1&_=2", std::nullopt},
      {"A=1&a=2", std::nullopt},
      {"a=1&b=2&b=3", "b"},
      {"a=&a=", "a"},
      {"b=1&b=2&a=1&a=2", "a"},  // the first of `known`, not the first in the query
  };
  for (const auto& c : cases) {
    BOOST_TEST_CONTEXT("query '" << c.raw << "'") {
      const QueryParams params = parse_all(c.raw);
      const auto thrown = api_error_of([&] { params.reject_duplicates(kKnown); });
      BOOST_TEST(thrown.has_value() == c.duplicate.has_value());
      if (thrown && c.duplicate) {
        BOOST_TEST(thrown->status == 400);
        BOOST_TEST(thrown->code == "duplicate_parameter");
        BOOST_TEST(thrown->param == *c.duplicate);
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(reject_duplicates_with_no_known_names_accepts_anything) {
  const QueryParams params = parse_all("a=1&a=2");
  BOOST_CHECK_NO_THROW(params.reject_duplicates({}));
}

BOOST_AUTO_TEST_CASE(is_valid_utf8_table) {
  const struct {
    std::string text;
    bool valid;
  } cases[] = {
      {"", true},
      {"plain ascii", true},
      {"\0"s, true},  // U+0000 is UTF-8; decode_component refuses it separately
      {"\x7f", true},
      {"\xC2\x80", true},          // U+0080, the smallest two-byte form
      {"\xDF\xBF", true},          // U+07FF
      {"\xE0\xA0\x80", true},      // U+0800, the smallest three-byte form
      {"\xED\x9F\xBF", true},      // U+D7FF, just below the surrogates
      {"\xEE\x80\x80", true},      // U+E000, just above them
      {"\xEF\xBF\xBF", true},      // U+FFFF
      {"\xF0\x90\x80\x80", true},  // U+10000, the smallest four-byte form
      {"\xF4\x8F\xBF\xBF", true},  // U+10FFFF, the largest code point
      {"J\xC3\xBCrgen \xE2\x82\xAC \xF0\x9F\x98\x80", true},
      {"\x80", false},                  // lone continuation byte
      {"\xBF", false},                  // lone continuation byte
      {"\xC0\xAF", false},              // overlong '/'
      {"\xC1\xBF", false},              // overlong U+007F
      {"\xE0\x80\xAF", false},          // overlong '/'
      {"\xE0\x9F\xBF", false},          // overlong U+07FF
      {"\xED\xA0\x80", false},          // U+D800, a surrogate
      {"\xED\xBF\xBF", false},          // U+DFFF, a surrogate
      {"\xF0\x80\x80\xAF", false},      // overlong '/'
      {"\xF0\x8F\xBF\xBF", false},      // overlong U+FFFF
      {"\xF4\x90\x80\x80", false},      // U+110000
      {"\xF5\x80\x80\x80", false},      // lead byte past U+10FFFF
      {"\xF8\x88\x80\x80\x80", false},  // five-byte form
      {"\xFE", false},
      {"\xFF", false},
      {"\xC3", false},          // truncated two-byte form
      {"\xE2\x82", false},      // truncated three-byte form
      {"\xF0\x9F\x98", false},  // truncated four-byte form
      {"\xC3\x28", false},      // second byte not a continuation
      {"\xE2\x28\xA1", false},
      {"\xE2\x82\x28", false},
      {"\xF0\x9F\x98\x28", false},
      {"ok\xC3", false},  // truncated at the very end
  };
  for (const auto& c : cases) {
    BOOST_TEST_CONTEXT("'" << printable(c.text) << "'") {
      BOOST_TEST(is_valid_utf8(c.text) == c.valid);
    }
  }
}

BOOST_AUTO_TEST_CASE(decode_component_accepts) {
  const struct {
    std::string encoded, decoded;
  } cases[] = {
      {"", ""},
      {"abc", "abc"},
      {"a+b", "a b"},
      {"++", "  "},
      {"%20", " "},
      {"%2B", "+"},
      {"%2b", "+"},
      {"%41", "A"},
      {"%7e", "~"},
      {"100%25", "100%"},
      {"%2541", "%41"},  // decoded once, not twice
      {"a%3Db%26c", "a=b&c"},
      {"%C3%A9", "\xC3\xA9"},
      {"%e2%82%ac", "\xE2\x82\xAC"},
      {"%F0%9F%98%80", "\xF0\x9F\x98\x80"},
      {"\xC3\xA9", "\xC3\xA9"},
  };
  for (const auto& c : cases) {
    BOOST_TEST_CONTEXT("'" << c.encoded << "'") {
      BOOST_TEST(shown(decode_component(c.encoded)) == shown(std::optional(c.decoded)));
    }
  }
}

BOOST_AUTO_TEST_CASE(decode_component_rejects) {
  for (const std::string& encoded :
       {"%"s, "%4"s, "a%"s, "%zz"s, "%G1"s, "%4G"s, "%-1"s, "% 1"s, "%%"s, "%00"s, "a\0"s, "\0"s,
        "%ff"s, "%c3%28"s, "%c0%af"s, "%ed%a0%80"s, "%f4%90%80%80"s, "%c3"s, "\xff"s}) {
    BOOST_TEST_CONTEXT("'" << printable(encoded) << "'") {
      BOOST_TEST(shown(decode_component(encoded)) == "<none>");
    }
  }
}
