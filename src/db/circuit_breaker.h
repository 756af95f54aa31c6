#pragma once
// One per server, shared by a process's connections (db::CircuitBreakers): after a few calls
// in a row got no answer from the server at all (a connect that failed or timed out, a statement
// that waited out the client's read timeout on a hung server), every connection skips it: a
// hung replica is passed over for the primary, and with no server left database-bound requests
// fail fast with a 503 instead of each waiting out its time budget. A prober thread
// (db/server_prober.h) tries an open server every half second and closes the breaker at its
// first answer. Errors the server itself sends (a statement timeout, a lock wait, a full
// statement cache) show it alive, and a connection closed at once (a restart, KILL) is simply
// replaced: neither counts.
//
// Rotation (replication lag) is the other reason a server is passed over: db/rotation.h.
#include <atomic>
#include <cstdint>

namespace connector::db {

class CircuitBreaker {
 public:
  // Consecutive calls without an answer that open the breaker.
  static constexpr std::uint32_t kOpenAfter = 3;

  // open_count: the process's count of open breakers (metrics::ProcessSlot::breakers_open),
  // moved as this one opens and closes; nullptr: not counted.
  explicit CircuitBreaker(std::atomic<std::uint32_t>* open_count = nullptr)
      : open_count_(open_count) {}

  bool open() const { return open_.load(std::memory_order_relaxed); }

  void record_answer() {
    failures_.store(0, std::memory_order_relaxed);
    // Loaded first: the common case, a closed breaker, writes nothing more.
    if (open() && open_.exchange(false, std::memory_order_relaxed)) count(-1);
  }

  void record_no_answer() {
    if (failures_.fetch_add(1, std::memory_order_relaxed) + 1 >= kOpenAfter &&
        !open_.exchange(true, std::memory_order_relaxed)) {
      count(+1);
    }
  }

 private:
  std::atomic<std::uint32_t> failures_{0};
  std::atomic<bool> open_{false};
  std::atomic<std::uint32_t>* open_count_;

  void count(int change) {
    if (open_count_ != nullptr) {
      open_count_->fetch_add(static_cast<std::uint32_t>(change), std::memory_order_relaxed);
    }
  }
};

}  // namespace connector::db
