#pragma once
// A task that one process of the pool does for all of them at a time (the replica lag monitor,
// the event publisher), held as a lease in the pool's shared state (pool/shared_state.h): its
// holder beats while it works; another process takes it over once the holder has not beaten for the
// lease's length (hung, gone), or at once when the master frees it (the holder exited). Only a
// process of the current configuration may hold it: the master moves the generation at each reload,
// which also frees it, so a process draining after a reload does the task no more.
#include <atomic>
#include <cstdint>

namespace connector::pool {

struct Lease {
  std::atomic<std::int32_t> pid{0};      // the holder, 0: none
  std::atomic<std::int64_t> beat_ms{0};  // the holder's last beat, CLOCK_MONOTONIC milliseconds
  std::atomic<std::uint32_t> generation{0};

  // Whether process `holder` of configuration `of_generation` holds the lease now: it held it
  // already, or takes it (free, or not beaten for lease_ms), one process only. A holder of an
  // older generation gives it up.
  bool hold(std::int32_t holder, std::uint32_t of_generation, std::int64_t now_ms,
            std::int64_t lease_ms);
  void beat(std::int64_t now_ms) { beat_ms.store(now_ms); }
  bool held_by(std::int32_t holder) const { return pid.load() == holder; }
  // Frees it if `holder` holds it (that process stops, or exited).
  void release(std::int32_t holder);
  // The master at start and at each reload: a new generation, free.
  void next_generation();
};

}  // namespace connector::pool
