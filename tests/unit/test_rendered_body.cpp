// The per-thread rendered bodies (json/rendered_body.h): rendered once per refreshed copy by each
// thread, one body per endpoint tag.
#define BOOST_TEST_MODULE rendered_body
#include <boost/test/unit_test.hpp>
#include <memory>
#include <string>
#include <thread>

#include "json/rendered_body.h"

using namespace connector;

namespace {

struct FirstBody;
struct SecondBody;

// Writes {"n":<n>} for copy n, counting the renderings.
template <typename Endpoint>
std::string answer(const std::shared_ptr<const int>& copy, int& renders) {
  rapidjson::StringBuffer buffer;
  json::JsonWriter out(buffer);
  json::ThreadRenderedBody<int, Endpoint>::write(out, copy, [&](json::JsonWriter& w, int n) {
    ++renders;
    w.StartObject();
    json::key(w, "n");
    w.Int(n);
    w.EndObject();
  });
  return {buffer.GetString(), buffer.GetSize()};
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_body_is_rendered_once_per_copy) {
  int renders = 0;
  const auto one = std::make_shared<const int>(1);
  BOOST_TEST(answer<FirstBody>(one, renders) == R"({"n":1})");
  BOOST_TEST(answer<FirstBody>(one, renders) == R"({"n":1})");
  BOOST_TEST(renders == 1);
  // A new copy, even of an equal value, is rendered again.
  BOOST_TEST(answer<FirstBody>(std::make_shared<const int>(1), renders) == R"({"n":1})");
  BOOST_TEST(renders == 2);
}

BOOST_AUTO_TEST_CASE(each_endpoint_and_each_thread_keeps_its_own_body) {
  int renders = 0;
  const auto two = std::make_shared<const int>(2);
  BOOST_TEST(answer<SecondBody>(two, renders) == R"({"n":2})");
  BOOST_TEST(answer<SecondBody>(two, renders) == R"({"n":2})");
  BOOST_TEST(renders == 1);
  int other_renders = 0;
  std::thread([&] { answer<SecondBody>(two, other_renders); }).join();
  BOOST_TEST(other_renders == 1);
  const auto three = std::make_shared<const int>(3);
  BOOST_TEST(answer<FirstBody>(three, renders) == R"({"n":3})");
  BOOST_TEST(answer<SecondBody>(two, renders) == R"({"n":2})");  // still its own, unrendered
  BOOST_TEST(renders == 2);
}
