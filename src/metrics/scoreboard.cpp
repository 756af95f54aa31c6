#include "metrics/scoreboard.h"

#include <algorithm>
#include <stdexcept>

#include <xxhash.h>

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

std::uint64_t server_key(std::string_view address) {
  return XXH3_64bits(address.data(), address.size()) | 1;
}

ServerSlot* Scoreboard::find_server(std::uint64_t key) {
  for (auto& slot : servers) {
    if (slot.key.load() == key) return &slot;
  }
  return nullptr;
}

const ServerSlot* Scoreboard::find_server(std::uint64_t key) const {
  for (const auto& slot : servers) {
    if (slot.key.load() == key) return &slot;
  }
  return nullptr;
}

void Scoreboard::assign_servers(std::span<const std::uint64_t> keys) {
  for (auto& slot : servers) {
    const std::uint64_t key = slot.key.load();
    if (key == 0 || std::find(keys.begin(), keys.end(), key) != keys.end()) continue;
    // The key first: no process writes the figures of a slot it cannot find.
    slot.key.store(0);
    slot.clear_figures();
  }
  for (const std::uint64_t key : keys) {
    if (key == 0 || find_server(key) != nullptr) continue;
    for (auto& slot : servers) {
      if (slot.key.load() != 0) continue;
      slot.clear_figures();
      slot.key.store(key);
      break;
    }
  }
}

void Scoreboard::assign_read_servers(std::span<const std::uint64_t> keys, bool lag_checked) {
  assign_servers(keys);
  if (!lag_checked) {
    for (auto& slot : servers) slot.clear_figures();
    return;
  }
  for (std::size_t i = 0; i < keys.size(); ++i) {
    auto* slot = find_server(keys[i]);
    if (slot == nullptr) continue;
    // Only a primary's slot holds a clock: a slot that has one (or not) tells its last role.
    const bool was_primary = slot->clock_us.load() != 0;
    if (i + 1 == keys.size()) {
      if (!was_primary) slot->clear_figures();  // in rotation, its heartbeat not read yet
    } else if (was_primary || slot->measured_unix_ms.load() == 0) {
      slot->clear_figures();
      slot->in_rotation.store(0);
    }
  }
}

void Scoreboard::record(std::size_t endpoint, int status, std::uint64_t duration_us, bool slow) {
  constexpr auto relaxed = std::memory_order_relaxed;
  endpoint = std::min(endpoint, kEndpointSlots - 1);  // the last slot: unknown
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
