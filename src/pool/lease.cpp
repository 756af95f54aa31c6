#include "pool/lease.h"

namespace connector::pool {

bool Lease::hold(std::int32_t holder, std::uint32_t of_generation, std::int64_t now_ms,
                 std::int64_t lease_ms) {
  std::int32_t current = pid.load();
  if (generation.load() != of_generation) {
    if (current == holder) pid.compare_exchange_strong(current, 0);
    return false;
  }
  if (current == holder) return true;
  if (current != 0 && now_ms - beat_ms.load() < lease_ms) return false;
  // Free, or its holder stopped beating: taken, by one process only.
  if (!pid.compare_exchange_strong(current, holder)) return false;
  beat_ms.store(now_ms);
  return true;
}

void Lease::release(std::int32_t holder) {
  std::int32_t current = holder;
  pid.compare_exchange_strong(current, 0);
}

void Lease::next_generation() {
  generation.fetch_add(1);
  pid.store(0);
}

}  // namespace connector::pool
