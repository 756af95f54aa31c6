#pragma once
// What the master reads of each worker process to decide (fcgi/master.h): whether it drains by
// itself, and whether it makes progress. Lock-free atomics only: the slots live in the pool's
// shared mapping (pool/shared_state.h). The figures of the same process (its threads, requests,
// refreshed copies) are the scoreboard's slot of the same index (metrics::ProcessSlot).
#include <atomic>
#include <cstddef>
#include <cstdint>

namespace connector::pool {

// Worker processes with a slot: `processes` x 2 during a reload.
inline constexpr std::size_t kMaxProcessSlots = 128;

// A cache line each: every thread of a process writes its heartbeat at each wake-up, which
// must not invalidate the line the other processes write theirs on.
struct alignas(64) ProcessControl {
  // Set by a process that has served max_requests and drains: the master starts its
  // replacement at once rather than when it exits.
  std::atomic<std::uint32_t> retiring{0};
  // CLOCK_MONOTONIC milliseconds when one of the process's threads last took work or found
  // none within a second: the master feeds systemd's watchdog only while every serving process
  // beats (fcgi/master.h).
  std::atomic<std::int64_t> heartbeat_ms{0};
};

static_assert(sizeof(ProcessControl) == 64);

}  // namespace connector::pool
