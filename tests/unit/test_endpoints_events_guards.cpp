// What the event endpoints keep from nchan or answer in its place (on events_fixture.h):
// conditional headers, refused streams, HEADs, a full or silent nchan, a bad Last-Event-ID.
#define BOOST_TEST_MODULE test_endpoints_events_guards
#include <boost/test/unit_test.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "events_fixture.h"
#include "util/clock.h"

using namespace connector;
using namespace connector::fakes;

BOOST_FIXTURE_TEST_SUITE(event_endpoints_on_fakes, EventsFixture)

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
