#include "metrics/scoreboard.h"

#include <algorithm>

#include "util/process_shared.h"

namespace connector::metrics {
namespace {

util::ProcessShared<Scoreboard> shared_scoreboard;

std::size_t status_index(int status) {
  const auto it = std::find(kStatusCodes.begin(), kStatusCodes.end() - 1, status);
  return static_cast<std::size_t>(it - kStatusCodes.begin());  // the last slot: any other
}

std::size_t bucket_index(std::uint64_t duration_us) {
  const auto it = std::lower_bound(kLatencyBucketsUs.begin(), kLatencyBucketsUs.end(), duration_us);
  return static_cast<std::size_t>(it - kLatencyBucketsUs.begin());
}

}  // namespace

std::uint32_t Scoreboard::active_threads() const {
  std::uint32_t sum = 0;
  for (const auto& slot : processes) {
    if (slot.pid.load(std::memory_order_relaxed) != 0) sum += slot.active.load();
  }
  return sum;
}

std::uint32_t Scoreboard::pending_requests() const {
  std::uint32_t sum = 0;
  for (const auto& slot : processes) {
    if (slot.pid.load(std::memory_order_relaxed) != 0) sum += slot.pending_requests.load();
  }
  return sum;
}

std::uint32_t Scoreboard::breakers_open() const {
  std::uint32_t sum = 0;
  for (const auto& slot : processes) {
    if (slot.pid.load(std::memory_order_relaxed) != 0) sum += slot.breakers_open.load();
  }
  return sum;
}

std::uint32_t Scoreboard::total_threads() const {
  std::uint32_t sum = 0;
  for (const auto& slot : processes) {
    if (slot.pid.load(std::memory_order_relaxed) != 0) sum += slot.threads.load();
  }
  return sum;
}

std::uint32_t Scoreboard::live_processes() const {
  return static_cast<std::uint32_t>(
      std::count_if(processes.begin(), processes.end(),
                    [](const auto& s) { return s.pid.load(std::memory_order_relaxed) != 0; }));
}

void Scoreboard::record(std::size_t endpoint, int status, std::uint64_t duration_us, bool slow) {
  constexpr auto relaxed = std::memory_order_relaxed;
  endpoint = std::min(endpoint, kEndpointSlots - 1);  // a bad index cannot write past the board
  requests[endpoint][status_index(status)].fetch_add(1, relaxed);
  latency[endpoint][bucket_index(duration_us)].fetch_add(1, relaxed);
  latency_sum_us[endpoint].fetch_add(duration_us, relaxed);
  if (slow) slow_requests.fetch_add(1, relaxed);
}

Scoreboard& scoreboard() { return shared_scoreboard.get(); }

Scoreboard& create_shared_scoreboard() { return shared_scoreboard.create_shared(); }

}  // namespace connector::metrics
static_assert(std::atomic<std::uint64_t>::is_always_lock_free,
              "shared counters need address-free atomics");
