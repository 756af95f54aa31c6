#pragma once
// What the event endpoint tests (test_endpoints_events*.cpp) share: the router serving the event
// endpoints, over endpoint_fakes.h's fakes.
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "endpoint_fakes.h"

namespace connector::fakes {

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

inline bool has_header(const api::HttpResponse& response, const std::string& line) {
  return response.head.find("\r\n" + line + "\r\n") != std::string::npos;
}

}  // namespace connector::fakes
