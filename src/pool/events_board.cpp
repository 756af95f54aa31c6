#include "pool/events_board.h"

#include <algorithm>

namespace connector::pool {

bool EventsBoard::request_initial_state(std::uint64_t history_id) {
  const std::uint64_t wanted = history_id + 1;
  // Asked for already and not taken yet: nothing to add.
  if (std::any_of(initial_state_requests_.begin(), initial_state_requests_.end(),
                  [wanted](const auto& slot) { return slot.load() == wanted; })) {
    return true;
  }
  for (auto& slot : initial_state_requests_) {
    std::uint64_t free = 0;
    if (slot.compare_exchange_strong(free, wanted)) return true;
  }
  initial_state_requests_dropped.fetch_add(1);
  return false;
}

std::vector<std::uint64_t> EventsBoard::take_initial_state_requests() {
  std::vector<std::uint64_t> ids;
  for (auto& slot : initial_state_requests_) {
    const std::uint64_t taken = slot.exchange(0);
    if (taken != 0) ids.push_back(taken - 1);
  }
  return ids;
}

}  // namespace connector::pool
