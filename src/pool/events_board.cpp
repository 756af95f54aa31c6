#include "pool/events_board.h"

#include <algorithm>

namespace connector::pool {

bool EventsBoard::request_snapshot(std::uint64_t history_id) {
  const std::uint64_t wanted = history_id + 1;
  // Asked for already and not taken yet: nothing to add.
  if (std::any_of(snapshot_requests_.begin(), snapshot_requests_.end(),
                  [wanted](const auto& slot) { return slot.load() == wanted; })) {
    return true;
  }
  for (auto& slot : snapshot_requests_) {
    std::uint64_t free = 0;
    if (slot.compare_exchange_strong(free, wanted)) return true;
  }
  snapshot_requests_dropped.fetch_add(1);
  return false;
}

std::vector<std::uint64_t> EventsBoard::take_snapshot_requests() {
  std::vector<std::uint64_t> ids;
  for (auto& slot : snapshot_requests_) {
    const std::uint64_t taken = slot.exchange(0);
    if (taken != 0) ids.push_back(taken - 1);
  }
  return ids;
}

}  // namespace connector::pool
