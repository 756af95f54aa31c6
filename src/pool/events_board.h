#pragma once
// The event publisher's part of the pool's shared state (src/events/publisher.h): its lease, how
// far it has published, whether nchan takes messages, and the records whose current state a new
// subscriber waits for. In shared memory, so another process that takes the lease over resumes
// where it stopped.
#include <array>
#include <atomic>
#include <cstdint>
#include <vector>

#include "pool/lease.h"

namespace connector::pool {

// Records waiting for their first event at once: after an nginx restart every record stream
// reconnects; the publisher empties the slots as it serves them, so more wait their turn.
inline constexpr std::size_t kInitialStateSlots = 256;

struct EventsBoard {
  Lease publisher;
  // The last change (history_changes.seq) published; valid once cursor_known.
  std::atomic<bool> cursor_known{false};
  std::atomic<std::uint64_t> cursor{0};
  // The cursor as it was kRecentKeptMs ago (0 until the holder has published that long): every
  // change up to it is gone from the channels kept a moment for returning streams
  // (nginx/connector-events-nginx.conf, /publish/recent: 2 s, dropped within the next second).
  // A stream that comes back after a later change would get that change again there, so the
  // worker tells it to come back shortly instead (api/event_stream.h, resume_stream).
  std::atomic<std::uint64_t> settled_cursor{0};
  static constexpr std::int64_t kRecentKeptMs = 3000;
  // Every slot taken (below), or past the publisher's budget (events/initial_state_budget.h): the
  // queue's own count, kept with it since request_initial_state() counts it (the publisher's other
  // figures: metrics::EventsCounters).
  std::atomic<std::uint64_t> initial_state_requests_dropped{0};
  // Until when (util::monotonic_ms) nchan is taken to be full: set by the publisher at each
  // message nchan refuses for good. nchan answers a subscriber it has no room for with an empty
  // 507 after its headers (no error page can make it the API's JSON, and a 507 ends a browser's
  // EventSource), so meanwhile the worker hands nothing over: a stream is told to come back
  // shortly, a long-poll gets a 503 with Retry-After (api/event_stream.h).
  std::atomic<std::int64_t> store_full_until_ms{0};
  static constexpr std::int64_t kStoreFullForMs = 30000;
  // Whether the events nginx answered the publisher's last request (events/nchan_client.h): a
  // request it did not answer (down, restarting, hung) makes it false until one is answered
  // again, and the publisher pings it every second meanwhile. While false, the worker hands
  // nothing over either (a hand-over would wait out the API nginx's read timeout, holding a
  // place of the node's cap): streams come back shortly, long-polls get a 503.
  std::atomic<bool> events_nginx_answers{true};

  // A subscriber waits for this record's current state (history.id); false, and counted, when
  // every slot is taken (the subscriber then gets the record at its next change).
  bool request_initial_state(std::uint64_t history_id);
  // The publisher: the ids asked for since its last call, each slot freed.
  std::vector<std::uint64_t> take_initial_state_requests();

 private:
  // history.id + 1 of a record asked for; 0: a free slot.
  std::array<std::atomic<std::uint64_t>, kInitialStateSlots> initial_state_requests_{};
};

}  // namespace connector::pool
