#include "pool/shared_state.h"

#include <algorithm>

#include <xxhash.h>

#include "util/process_shared.h"

namespace connector::pool {
namespace {

util::ProcessShared<SharedState> shared;

}  // namespace

std::uint64_t server_key(std::string_view address) {
  return XXH3_64bits(address.data(), address.size()) | 1;
}

ServerSlot* SharedState::find_server(std::uint64_t key) {
  for (auto& slot : servers) {
    if (slot.key.load() == key) return &slot;
  }
  return nullptr;
}

const ServerSlot* SharedState::find_server(std::uint64_t key) const {
  for (const auto& slot : servers) {
    if (slot.key.load() == key) return &slot;
  }
  return nullptr;
}

void SharedState::assign_servers(std::span<const std::uint64_t> keys) {
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

void SharedState::assign_read_servers(std::span<const std::uint64_t> keys, bool lag_checked) {
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

SharedState& shared_state() { return shared.get(); }

SharedState& create_shared_state() { return shared.create_shared(); }

}  // namespace connector::pool
