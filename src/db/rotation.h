#pragma once
// Whether reads may use a database server: the rotation rule, apart from the reading of lag
// (db/replica_lag.h) and from the lag monitor that applies it (db/replica_monitor.h), so that
// every case of it is tested on its own (tests/unit/test_rotation.cpp); and where a process
// keeps the decision (Rotation). The circuit breaker (db/circuit_breaker.h) is the other, and
// independent, reason a server is passed over.
#include <atomic>
#include <cstdint>
#include <optional>

#include "pool/server_slot.h"

namespace connector::db {

enum class ServerRole : std::uint8_t { replica, primary };

// The primary's event writes a heartbeat this often (sql/migrations/0005): a replica within it
// holds all the pool knows the primary wrote.
inline constexpr std::int64_t kCaughtUpMs = 1000;

// What the lag monitor knows of a server after a round.
struct RotationInputs {
  ServerRole role = ServerRole::replica;
  bool in_rotation = false;            // as last decided
  std::optional<std::int64_t> lag_ms;  // nullopt: not measured (away, hung, no heartbeat)
  bool primary_read = false;           // this round read the primary's clock
  std::int64_t max_lag_ms = 0;         // db_replica_max_lag_s; 0: no bound
};

// The rule. The primary, or any server without a bound, is always in. A replica goes out once
// its lag passes the bound or cannot be told; it comes back only within half the bound (so one
// hovering at the bound does not flap) and then only after a reading of the primary or once
// caught up (within kCaughtUpMs of the newest time the pool knows the primary wrote): being
// within half the bound of an old reference would not bound its data.
constexpr bool in_rotation_after(const RotationInputs& in) {
  if (in.role == ServerRole::primary || in.max_lag_ms <= 0) return true;
  if (!in.lag_ms) return false;
  if (in.in_rotation) return *in.lag_ms <= in.max_lag_ms;
  const bool caught_up = *in.lag_ms <= kCaughtUpMs;
  return *in.lag_ms <= in.max_lag_ms / 2 && (in.primary_read || caught_up);
}

// One server's rotation in a process, the one place it is kept there: the pool's, as the lag
// monitor decides it into the server's shared slot (read at each request, so every process
// follows a change the moment it is made), or without a slot (tools, tests) this process's own.
// Shared by the process's connections beside the server's breaker (db::CircuitBreakers).
class Rotation {
 public:
  bool in() const {
    const auto* slot = slot_.load(std::memory_order_acquire);
    if (slot == nullptr) return own_.load(std::memory_order_relaxed);
    // A slot the master gave to another server since (a reload): out, as not measured.
    return slot->key.load(std::memory_order_relaxed) == key_ &&
           slot->in_rotation.load(std::memory_order_relaxed) != 0;
  }

  // The lag monitor's decision: into the slot while it is still this server's, else kept here.
  void set(bool in) {
    auto* slot = slot_.load(std::memory_order_acquire);
    if (slot == nullptr) {
      own_.store(in, std::memory_order_relaxed);
    } else if (slot->key.load(std::memory_order_relaxed) == key_) {
      slot->in_rotation.store(in ? 1 : 0, std::memory_order_relaxed);
    }
  }

  // From now on the rotation is the pool's, in `slot` (the server's, found by `key`), whichever
  // process measures. Called once, before the process's request threads start (the lag
  // monitor's constructor).
  void follow(pool::ServerSlot& slot, std::uint64_t key) {
    key_ = key;
    slot_.store(&slot, std::memory_order_release);
  }

 private:
  std::atomic<bool> own_{true};
  std::atomic<pool::ServerSlot*> slot_{nullptr};
  std::uint64_t key_ = 0;  // written before slot_ is published
};

}  // namespace connector::db
