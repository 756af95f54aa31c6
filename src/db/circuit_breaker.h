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
// A replica is also skipped while it is out of rotation: further behind its primary than
// db_replica_max_lag_s, as the lag monitor measures it (db/replica_monitor.h). In the worker the
// decision is read from the pool's shared scoreboard at each request, so every process follows
// a change the moment it is made.
#include <atomic>
#include <cstdint>

#include "metrics/scoreboard.h"

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
  bool in_rotation() const {
    const auto* slot = rotation_slot_.load(std::memory_order_acquire);
    if (slot == nullptr) return in_rotation_.load(std::memory_order_relaxed);
    // A slot the master gave to another server since (a reload): out, as not measured.
    return slot->key.load(std::memory_order_relaxed) == rotation_key_ &&
           slot->in_rotation.load(std::memory_order_relaxed) != 0;
  }
  // Passed over by request connections: hung, or too far behind.
  bool skipped() const { return open() || !in_rotation(); }

  // Without a shared slot (tools, tests): the rotation this process decided.
  void set_in_rotation(bool in_rotation) {
    in_rotation_.store(in_rotation, std::memory_order_relaxed);
  }
  // From now on the rotation is the pool's, as the lag monitor writes it into `slot` (the
  // server's, found by `key`), whichever process measures. Called once per breaker, before the
  // process's request threads start (the lag monitor's constructor).
  void follow_rotation(const metrics::ServerSlot& slot, std::uint64_t key) {
    rotation_key_ = key;
    rotation_slot_.store(&slot, std::memory_order_release);
  }

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
  std::atomic<bool> in_rotation_{true};
  std::atomic<const metrics::ServerSlot*> rotation_slot_{nullptr};
  std::uint64_t rotation_key_ = 0;  // written before rotation_slot_ is published
  std::atomic<std::uint32_t>* open_count_;

  void count(int change) {
    if (open_count_ != nullptr) {
      open_count_->fetch_add(static_cast<std::uint32_t>(change), std::memory_order_relaxed);
    }
  }
};

}  // namespace connector::db
