#pragma once
// The arithmetic of replication lag, apart from the database (db/replica_monitor.h does the
// reading). The primary's event writes its clock into a heartbeat row every second
// (sql/migrations/0005); a replica's copy of the newest row says how far its applied data
// reaches. Times are microseconds since the epoch on the primary's clock.
#include <cstdint>
#include <optional>
#include <span>

namespace connector::db {

// What a replica's lag is measured against: the primary's clock when it answered this round;
// when it did not (down, hung), the newest time known to have been written by it: its clock
// when it last answered, or a replica's newest heartbeat if that is newer. So losing the
// primary does not push every replica out at once: a replica that was current when the primary
// went away stays in rotation, one that was behind stays out. nullopt: nothing known yet.
std::optional<std::int64_t> lag_reference(std::optional<std::int64_t> primary_now_us,
                                          std::optional<std::int64_t> last_primary_now_us,
                                          std::span<const std::optional<std::int64_t>> heartbeats);

// A replica's lag in milliseconds (never negative), or nullopt when it cannot be told (no
// heartbeat readable on the replica, or no reference).
std::optional<std::int64_t> replica_lag_ms(std::optional<std::int64_t> reference_us,
                                           std::optional<std::int64_t> heartbeat_us);

}  // namespace connector::db
