#include "webhooks/subscription_queue.h"

#include <algorithm>
#include <utility>

#include "webhooks/retry_schedule.h"

namespace connector::webhooks {

SubscriptionQueue::SubscriptionQueue(const StoredQueueState& stored)
    : stored_(stored), known_upto_(stored.acked_seq) {}

bool SubscriptionQueue::offer(QueuedChange change) {
  if (change.seq <= known_upto_) return true;  // queued or acknowledged already
  if (!has_room()) {
    known_upto_ = std::max(known_upto_, change.seq - 1);
    return false;
  }
  known_upto_ = change.seq;
  queued_.push_back(std::move(change));
  return true;
}

void SubscriptionQueue::known_through(std::uint64_t position) {
  known_upto_ = std::max(known_upto_, position);
}

void SubscriptionQueue::offer_late(QueuedChange change) {
  if (change.seq > known_upto_ || change.seq <= stored_.acked_seq) return;
  auto at = queued_.begin();
  if (in_flight_ && at != queued_.end()) ++at;  // the one in flight stays first
  while (at != queued_.end() && at->seq < change.seq) ++at;
  if (at != queued_.end() && at->seq == change.seq) return;
  queued_.insert(at, std::move(change));
}

const QueuedChange* SubscriptionQueue::due(Clock::time_point now) const {
  if (in_flight_ || queued_.empty()) return nullptr;
  if (next_attempt_at_ && now < *next_attempt_at_) return nullptr;
  return &queued_.front();
}

void SubscriptionQueue::acknowledged() {
  in_flight_ = false;
  if (queued_.empty()) return;
  queued_.pop_front();
  stored_.attempt = 0;
  stored_.retrying_since_us.reset();
  stored_.failing_since_us.reset();
  next_attempt_at_.reset();
}

void SubscriptionQueue::failed(Clock::time_point now, std::int64_t now_us, double uniform) {
  in_flight_ = false;
  stored_.attempt += 1;
  if (!stored_.retrying_since_us) stored_.retrying_since_us = now_us;
  next_attempt_at_ = now + retry_delay(stored_.attempt, uniform);
  using std::chrono::system_clock;
  const auto since =
      system_clock::time_point(std::chrono::microseconds(*stored_.retrying_since_us));
  const auto at = system_clock::time_point(std::chrono::microseconds(now_us));
  if (!stored_.failing_since_us && is_failing(since, at)) stored_.failing_since_us = now_us;
}

void SubscriptionQueue::replay_from(std::uint64_t seq) {
  queued_.clear();
  in_flight_ = false;
  next_attempt_at_.reset();
  stored_.attempt = 0;
  stored_.retrying_since_us.reset();
  stored_.acked_seq = seq == 0 ? 0 : seq - 1;
  known_upto_ = stored_.acked_seq;
}

std::uint64_t SubscriptionQueue::acked_seq() const {
  if (queued_.empty()) return known_upto_;
  const auto lowest =
      std::min_element(queued_.begin(), queued_.end(),
                       [](const QueuedChange& a, const QueuedChange& b) { return a.seq < b.seq; });
  return lowest->seq - 1;
}

StoredQueueState SubscriptionQueue::stored() const {
  StoredQueueState state = stored_;
  state.acked_seq = acked_seq();
  return state;
}

std::optional<std::int64_t> SubscriptionQueue::oldest_changed_us() const {
  if (queued_.empty()) return std::nullopt;
  return queued_.front().changed_us;
}

}  // namespace connector::webhooks
