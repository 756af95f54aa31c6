#pragma once
// The worker's figures, shared by all its processes: a plain struct of atomics in one anonymous
// shared mapping made by the master before it forks, like php-fpm's scoreboard. Lock-free
// atomics are address-free, so every process updates the same counters. /metrics and /status
// render it; nothing here allocates. What the processes coordinate by (leases, rotation, the
// publisher's cursor and queue, a process's retiring flag and heartbeat) is not here but in
// pool/shared_state.h.
#include <array>
#include <atomic>
#include <cstdint>

#include "metrics/events_counters.h"
#include "pool/process_control.h"

namespace connector::metrics {

// Room for the counters per endpoint: the API's endpoints, the operations paths, anything
// unknown. Which slots are used, and their labels, come from the endpoint descriptions
// (api::endpoint_labels(); api/router.h checks they fit), so adding an endpoint changes nothing
// here; unused slots stay zero and are not shown.
inline constexpr std::size_t kEndpointSlots = 32;

inline constexpr std::array<int, 9> kStatusCodes = {200, 304, 400, 404, 405, 414, 500, 503, 0};
// Upper bounds of the latency histogram, in microseconds (the last bucket is +Inf).
inline constexpr std::array<std::uint64_t, 12> kLatencyBucketsUs = {
    500, 1000, 2500, 5000, 10000, 25000, 50000, 100000, 250000, 500000, 1000000, 2500000};

// The reasons of fastcgi::FcgiRejection after kNone: malformed, too large, management, deadline.
inline constexpr std::size_t kFcgiRejectionReasons = 4;

// When a process's refreshed copy (db/refreshed.h) was last loaded (0: never): as_of when the load
// began (every row committed before it is in the copy), loaded when it was stored (its age,
// and so when it stops being served, counts from there), in unix milliseconds and on
// CLOCK_MONOTONIC, the clock the age is counted on (the same for every process of the host).
// /status shows them so that an operator, or a test, can tell what a process serves from memory
// without guessing from its own clock.
struct RefreshedLoad {
  std::atomic<std::int64_t> as_of_unix_ms{0};
  std::atomic<std::int64_t> loaded_unix_ms{0};
  std::atomic<std::int64_t> loaded_monotonic_ns{0};

  void clear() {
    as_of_unix_ms.store(0);
    loaded_unix_ms.store(0);
    loaded_monotonic_ns.store(0);
  }
};

struct RefreshedLoads {
  RefreshedLoad reference;  // networks, connects, pairs
  RefreshedLoad supply;     // the chains' status and supply (/v1/ab)

  void clear() {
    reference.clear();
    supply.clear();
  }
};

// One worker process's figures (what the master decides by, retiring and the heartbeat, is the
// pool's slot of the same index: pool::ProcessControl). The master clears a slot when its
// process exits, so a crashed process leaves no phantom busy threads behind.
struct ProcessSlot {
  std::atomic<std::int32_t> pid{0};
  std::atomic<std::uint32_t> threads{0};
  std::atomic<std::uint32_t> active{0};
  std::atomic<std::uint64_t> requests{0};
  // Connections whose request is not whole yet, waiting without a thread
  // (fcgi/pending_requests.h).
  std::atomic<std::uint32_t> pending_requests{0};
  // Database servers this process skips now because they stopped answering (db::CircuitBreaker).
  std::atomic<std::uint32_t> breakers_open{0};
  RefreshedLoads refreshed_loads;
};

struct Scoreboard {
  std::atomic<std::int64_t> start_time_unix{0};
  std::atomic<std::uint64_t> accepted{0};
  std::atomic<std::uint32_t> max_active{0};
  std::atomic<std::uint64_t> slow_requests{0};
  std::atomic<std::uint64_t> db_errors{0};
  std::atomic<std::uint64_t> db_reconnects{0};
  std::atomic<std::uint64_t> reference_reloads{0};
  std::atomic<std::uint64_t> process_starts{0};
  std::atomic<std::uint64_t> process_recycles{0};
  std::atomic<std::uint64_t> process_crashes{0};
  std::atomic<std::uint64_t> config_reloads{0};
  std::atomic<std::uint64_t> deposit_accounts_created{0};  // rows this worker inserted
  std::atomic<std::uint64_t> deposit_accounts_refused{0};  // new rows refused by the cap
  // FastCGI requests closed before libfcgi read them (fcgi/request_screen.h), by reason:
  // index fastcgi::FcgiRejection - 1.
  std::array<std::atomic<std::uint64_t>, kFcgiRejectionReasons> fcgi_rejected{};
  // Worker processes the master killed: retiring ones that did not end within
  // shutdown_timeout_s.
  std::atomic<std::uint64_t> processes_killed{0};
  std::atomic<std::uint32_t> configured_processes{0};
  std::atomic<std::uint32_t> configured_threads{0};
  std::atomic<std::uint32_t> max_requests{0};

  std::array<std::array<std::atomic<std::uint64_t>, kStatusCodes.size()>, kEndpointSlots>
      requests{};
  std::array<std::array<std::atomic<std::uint64_t>, kLatencyBucketsUs.size() + 1>, kEndpointSlots>
      latency{};
  std::array<std::atomic<std::uint64_t>, kEndpointSlots> latency_sum_us{};

  std::array<ProcessSlot, pool::kMaxProcessSlots> processes{};
  EventsCounters events;

  // Figures summed over the live process slots.
  std::uint32_t active_threads() const;
  std::uint32_t pending_requests() const;
  std::uint32_t breakers_open() const;
  std::uint32_t total_threads() const;
  std::uint32_t live_processes() const;

  // One finished request: counts, histogram, slow count.
  void record(std::size_t endpoint, int status, std::uint64_t duration_us, bool slow);
};

// The process's scoreboard: the shared one in the worker, a private one elsewhere (tools,
// tests), so counting code never checks for null.
Scoreboard& scoreboard();

// Maps a fresh shared scoreboard and makes it this process's (and its future children's).
Scoreboard& create_shared_scoreboard();

// Counts one more of a counter, relaxed: figures, not synchronisation.
inline void increment(std::atomic<std::uint64_t> Scoreboard::*counter) {
  (scoreboard().*counter).fetch_add(1, std::memory_order_relaxed);
}

}  // namespace connector::metrics
