#pragma once
// The event publisher's figures (src/events/publisher.h), on the scoreboard with the others; what
// the publisher coordinates by (its lease, cursor, initial-state queue) is pool/events_board.h.
#include <atomic>
#include <cstdint>

namespace connector::metrics {

struct EventsCounters {
  std::atomic<std::uint64_t> changes_published{0};
  std::atomic<std::uint64_t> initial_states_published{0};
  std::atomic<std::uint64_t> publish_failures{0};
  // Feed positions passed over: holes that did not fill in time, changes trimmed unpublished.
  std::atomic<std::uint64_t> changes_passed_over{0};
  // Changes passed over because their record names no channel (domain::has_channel_names).
  std::atomic<std::uint64_t> changes_unpublishable{0};
  // Messages nchan refused for good (events/publish_verdict.h: 507 when its memory is full).
  std::atomic<std::uint64_t> publishes_refused{0};
  std::atomic<std::int64_t> last_round_unix_ms{0};  // the publisher's last finished round
};

}  // namespace connector::metrics
