#pragma once
// Whether reads may use a database server: the rotation rule, apart from the reading of lag
// (db/replica_lag.h) and from the lag monitor that applies it (db/replica_monitor.h), so that
// every case of it is tested on its own (tests/unit/test_replica_lag.cpp).
#include <cstdint>
#include <optional>

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

}  // namespace connector::db
