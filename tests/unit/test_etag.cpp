#define BOOST_TEST_MODULE test_etag
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <set>
#include <string>

#include "http/etag.h"
#include "http/request_id.h"

using namespace connector::http;
using namespace std::string_literals;

namespace {

bool is_lower_hex(const std::string& text) {
  return std::all_of(text.begin(), text.end(),
                     [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

const std::string kHelloBody = R"({"hello":"world"})";

const std::string kTag = R"("0123456789abcdef0123456789abcdef")";
const std::string kOther = R"("fedcba9876543210fedcba9876543210")";

}  // namespace

BOOST_AUTO_TEST_CASE(strong_etag_is_quoted_32_lower_hex) {
  for (const std::string& body : {""s, "x"s, kHelloBody, std::string(100000, 'z'), "\0\xff"s}) {
    BOOST_TEST_CONTEXT(body.size() << " bytes") {
      const std::string tag = strong_etag(body);
      BOOST_REQUIRE(tag.size() == 34u);
      BOOST_TEST(tag.front() == '"');
      BOOST_TEST(tag.back() == '"');
      BOOST_TEST(is_lower_hex(tag.substr(1, 32)));
    }
  }
}

BOOST_AUTO_TEST_CASE(strong_etag_is_xxh3_128_as_xxhsum_prints_it) {
  // Expected from `printf '%s' BODY | xxhsum -H2` (Debian's xxhash), one body per XXH3 code
  // path: up to 16 bytes, 17-128, 129-240, and longer (the striped loop).
  BOOST_TEST(strong_etag("") == R"("99aa06d3014798d86001c324468d497f")");
  BOOST_TEST(strong_etag("abc") == R"("06b05ab6733a618578af5f94892f3950")");
  BOOST_TEST(strong_etag(kHelloBody) == R"("7cf103ce54653f778337c1f78644b860")");
  BOOST_TEST(strong_etag(std::string(200, 'z')) == R"("65d792960f2c877db7702962a1b9b1ec")");
  BOOST_TEST(strong_etag(std::string(300, 'z')) == R"("c4f0fbb15864b96a4d3f26454e4c3335")");
  BOOST_TEST(strong_etag(std::string(100000, 'z')) == R"("e8d9967efad88e1346aea077e4fefafb")");
}

BOOST_AUTO_TEST_CASE(equal_bodies_equal_tags) {
  const std::string a = kHelloBody;
  const std::string b(kHelloBody.begin(), kHelloBody.end());  // another buffer, same bytes
  BOOST_TEST(strong_etag(a) == strong_etag(b));
}

BOOST_AUTO_TEST_CASE(different_bodies_different_tags) {
  BOOST_TEST(strong_etag(R"({"hello":"world"})") != strong_etag(R"({"hello":"World"})"));
  BOOST_TEST(strong_etag("a") != strong_etag("a "));
  BOOST_TEST(strong_etag("") != strong_etag("\0"s));
  // The tag depends on every byte, the last one included.
  BOOST_TEST(strong_etag(std::string(5000, 'a') + "a") !=
             strong_etag(std::string(5000, 'a') + "b"));
}

BOOST_AUTO_TEST_CASE(if_none_match_table) {
  const struct {
    std::string header;
    bool matches;
  } cases[] = {
      {kTag, true},
      {"*", true},
      {" * ", true},
      {"W/" + kTag, true},
      {kOther + ", " + kTag, true},
      {kOther + "," + kTag, true},
      {kTag + " , " + kOther, true},
      {"\t" + kTag + "\t", true},
      {kOther + ",  W/" + kTag, true},
      {kOther + ", *", true},
      {"", false},
      {kOther, false},
      {"W/" + kOther, false},
      {kOther + ", " + kOther, false},
      {kTag.substr(1, 32), false},  // unquoted
      {"w/" + kTag, false},         // the weak prefix is case-sensitive
      {kTag + "x", false},
      {"\"" + kTag + "\"", false},
      {",", false},
      {" , , ", false},
      {"**", false},
  };
  for (const auto& c : cases) {
    BOOST_TEST_CONTEXT("If-None-Match: " << c.header) {
      BOOST_TEST(if_none_match_matches(c.header, kTag) == c.matches);
    }
  }
}

BOOST_AUTO_TEST_CASE(if_none_match_with_a_real_etag) {
  const std::string tag = strong_etag(kHelloBody);
  BOOST_TEST(if_none_match_matches(tag, tag));
  BOOST_TEST(!if_none_match_matches(strong_etag(kHelloBody + " "), tag));
}

BOOST_AUTO_TEST_CASE(is_valid_request_id_table) {
  const struct {
    std::string id;
    bool valid;
  } cases[] = {
      {"0123456789abcdef0123456789abcdef", true},
      {"0123456789ABCDEF0123456789ABCDEF", true},
      {"req-1", true},
      {"a", true},
      {std::string(64, 'a'), true},
      {std::string(65, 'a'), false},
      {std::string(100, 'a'), false},
      {"", false},
      {"has space", false},
      {"a_b", false},
      {"a.b", false},
      {"a/b", false},
      {"a\"b", false},
      {"id\r\nX-Injected: 1", false},
      {"id\n", false},
      {"\0"s, false},
      {"caf\xC3\xA9", false},
  };
  for (const auto& c : cases) {
    BOOST_TEST_CONTEXT("'" << c.id << "'") { BOOST_TEST(is_valid_request_id(c.id) == c.valid); }
  }
}

BOOST_AUTO_TEST_CASE(make_request_id_is_32_lower_hex) {
  for (int i = 0; i < 100; ++i) {
    const std::string id = make_request_id();
    BOOST_TEST_CONTEXT(id) {
      BOOST_TEST(id.size() == 32u);
      BOOST_TEST(is_lower_hex(id));
      BOOST_TEST(is_valid_request_id(id));
    }
  }
}

BOOST_AUTO_TEST_CASE(make_request_id_differs_from_call_to_call) {
  const std::string first = make_request_id();
  const std::string second = make_request_id();
  BOOST_TEST(first != second);
  std::set<std::string> ids;
  for (int i = 0; i < 1000; ++i) ids.insert(make_request_id());
  BOOST_TEST(ids.size() == 1000u);
}
