// json::ObjectText writes what rapidjson::Writer writes, byte for byte.
#define BOOST_TEST_MODULE object_text
#include <boost/test/unit_test.hpp>
#include <random>
#include <string>

#include "json/json_writer.h"
#include "json/object_text.h"

using namespace connector;

namespace {

std::string by_rapidjson(std::string_view value) {
  rapidjson::StringBuffer buffer;
  json::JsonWriter w(buffer);
  json::string(w, value);
  return {buffer.GetString(), buffer.GetSize()};
}

std::string by_object_text(std::string_view value) {
  std::string out;
  json::append_string(out, value);
  return out;
}

}  // namespace

BOOST_AUTO_TEST_CASE(every_byte_is_escaped_as_rapidjson_escapes_it) {
  for (int c = 0; c < 256; ++c) {
    const std::string one(1, static_cast<char>(c));
    const std::string text = "a" + one + "b" + one;
    BOOST_TEST_CONTEXT("byte " << c) {
      BOOST_TEST(by_object_text(one) == by_rapidjson(one));
      BOOST_TEST(by_object_text(text) == by_rapidjson(text));
    }
  }
  BOOST_TEST(by_object_text("a\"b\\c\n\x01/é") == "\"a\\\"b\\\\c\\n\\u0001/é\"");
  BOOST_TEST(by_object_text("") == "\"\"");
}

BOOST_AUTO_TEST_CASE(a_character_to_escape_is_found_at_any_position_of_a_long_string) {
  // Clean strings are checked 8 bytes at a time: every position of the word and the tail.
  for (unsigned char special : {0x00, 0x01, 0x1F, 0x22, 0x5C}) {
    for (std::size_t at = 0; at < 67; ++at) {
      std::string text(67, 'a');
      text[at] = static_cast<char>(special);
      BOOST_TEST_CONTEXT("byte " << int(special) << " at " << at) {
        BOOST_TEST(by_object_text(text) == by_rapidjson(text));
      }
    }
  }
  // Near misses of each: not escaped.
  for (unsigned char near : {0x20, 0x21, 0x23, 0x5B, 0x5D, 0x7F, 0x80, 0xA2, 0xDC, 0xFF}) {
    const std::string text(40, static_cast<char>(near));
    BOOST_TEST(by_object_text(text) == by_rapidjson(text));
  }
}

BOOST_AUTO_TEST_CASE(random_strings_match_rapidjson) {
  std::mt19937 random(7);
  for (int i = 0; i < 2000; ++i) {
    std::string text(random() % 40, '\0');
    for (auto& c : text) c = static_cast<char>(random() % 256);
    BOOST_TEST(by_object_text(text) == by_rapidjson(text));
  }
}

BOOST_AUTO_TEST_CASE(an_object_matches_the_writers) {
  std::string text;
  json::ObjectText o(text);
  o.string("id", "42");
  o.number("pair_id", std::uint64_t{18446744073709551615u});
  o.number("decimals", std::int64_t{-8});
  o.number_as_string("chain_id", 36888);
  o.string("note", "tab\there");
  o.close();

  rapidjson::StringBuffer buffer;
  json::JsonWriter w(buffer);
  w.StartObject();
  json::member(w, "id", "42");
  json::member_uint(w, "pair_id", 18446744073709551615u);
  json::member_int(w, "decimals", -8);
  json::member_as_string(w, "chain_id", 36888);
  json::member(w, "note", "tab\there");
  w.EndObject();
  BOOST_TEST(text == std::string(buffer.GetString(), buffer.GetSize()));
}

BOOST_AUTO_TEST_CASE(raw_objects_take_their_place_among_the_writers_values) {
  std::string first, second;
  json::ObjectText(first).close();
  json::ObjectText o(second);
  o.string("a", "b");
  o.close();
  rapidjson::StringBuffer buffer;
  json::JsonWriter w(buffer);
  w.StartObject();
  json::key(w, "list");
  w.StartArray();
  w.raw(first, rapidjson::kObjectType);
  w.raw(second, rapidjson::kObjectType);
  w.EndArray();
  json::member(w, "after", "x");
  w.EndObject();
  BOOST_TEST(std::string(buffer.GetString(), buffer.GetSize()) ==
             R"({"list":[{},{"a":"b"}],"after":"x"})");
  BOOST_TEST(w.IsComplete());
}
