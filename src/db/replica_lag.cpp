#include "db/replica_lag.h"

#include <algorithm>

namespace connector::db {

std::optional<std::int64_t> lag_reference(std::optional<std::int64_t> primary_now_us,
                                          std::optional<std::int64_t> last_primary_now_us,
                                          std::span<const std::optional<std::int64_t>> heartbeats) {
  if (primary_now_us) return primary_now_us;
  std::optional<std::int64_t> newest = last_primary_now_us;
  for (const auto& heartbeat : heartbeats) {
    if (heartbeat && (!newest || *heartbeat > *newest)) newest = heartbeat;
  }
  return newest;
}

std::optional<std::int64_t> replica_lag_ms(std::optional<std::int64_t> reference_us,
                                           std::optional<std::int64_t> heartbeat_us) {
  if (!reference_us || !heartbeat_us) return std::nullopt;
  return std::max<std::int64_t>(0, *reference_us - *heartbeat_us) / 1000;
}

}  // namespace connector::db
