#pragma once
// What one subscription has to be sent, and where it stands: the changes it follows that the
// deliverer has read and the receiver has not acknowledged yet, oldest first, sent one at a time
// (in order per record, since in seq order), and the retry state of the first. No I/O: the
// deliverer (webhooks/deliverer.h) reads the feed into it, sends what it says is due, and stores
// what it says to store.
//
// known_upto: every change it follows with seq <= known_upto is queued here or acknowledged.
// The deliverer's shared read of the feed offers each change to the queues that have seen
// everything before it; a queue that is full (kMaxQueued) stops there, falls behind, and reads
// on by itself once it has room (Deliverer::catch_up).
#include <chrono>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>

#include "domain/history.h"

namespace connector::webhooks {

struct QueuedChange {
  std::uint64_t seq = 0;
  std::int64_t changed_us = 0;  // when the change was written (the primary's clock)
  domain::HistoryRecord record;
};

// The delivery state kept in webhook_queues (sql/migrations/0008).
struct StoredQueueState {
  std::uint64_t acked_seq = 0;
  std::uint32_t attempt = 0;  // failed attempts of the next change
  std::optional<std::int64_t> retrying_since_us;
  std::optional<std::int64_t> failing_since_us;
};

class SubscriptionQueue {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr std::size_t kMaxQueued = 1000;

  explicit SubscriptionQueue(const StoredQueueState& stored);

  std::uint64_t known_upto() const { return known_upto_; }
  // Whether it has seen the feed up to `position` (and takes the changes after it).
  bool follows(std::uint64_t position) const { return known_upto_ >= position; }
  bool has_room() const { return queued_.size() < kMaxQueued; }
  // A change it follows, after known_upto. False when full: it then knows the feed only up to
  // the change before, and the caller stops offering it anything.
  bool offer(QueuedChange change);
  // The feed up to `position` held nothing more for it.
  void known_through(std::uint64_t position);
  // A change it follows that became visible only after it had read past its seq (its
  // transaction committed after a later one's; Deliverer::watch_late): queued in seq order
  // behind the one in flight, and the cursor to store goes back before it until it is
  // acknowledged. Nothing when it is queued or acknowledged already, or not read past yet.
  void offer_late(QueuedChange change);

  // The change to send now: the oldest, when none is in flight and its retry time has come.
  const QueuedChange* due(Clock::time_point now) const;
  void sending() { in_flight_ = true; }
  bool in_flight() const { return in_flight_; }
  // The attempt number of the change being sent (1 for the first).
  std::uint32_t attempt() const { return stored_.attempt + 1; }
  // A 2xx: the oldest change is delivered.
  void acknowledged();
  // Anything else: the same change again after the retry delay (webhooks/retry_schedule.h);
  // `uniform` in [0, 1) is the jitter's draw. Past 24 h of failures it is failing.
  void failed(Clock::time_point now, std::int64_t now_us, double uniform);
  // Its receiver's host answered another subscription again: the change waiting for a retry is
  // due now rather than at the end of its (up to an hour's) wait. The attempt count stays.
  void retry_now() { next_attempt_at_.reset(); }
  // An operator's replay: from `seq` on again; what is queued is dropped (read again).
  void replay_from(std::uint64_t seq);
  // Nothing in flight any more (a transfer cancelled, or lost with the lease).
  void cancel_in_flight() { in_flight_ = false; }

  // Every change up to this was acknowledged, or there was none: the cursor to store (before
  // the lowest queued seq: a late change may sit behind the one in flight).
  std::uint64_t acked_seq() const;
  StoredQueueState stored() const;
  std::size_t queued() const { return queued_.size(); }
  // The oldest change not acknowledged (the one in flight, or next); nullptr when none.
  const QueuedChange* oldest() const { return queued_.empty() ? nullptr : &queued_.front(); }
  // When the oldest unacknowledged change was written; nullopt when none is queued.
  std::optional<std::int64_t> oldest_changed_us() const;
  bool failing() const { return stored_.failing_since_us.has_value(); }
  std::optional<Clock::time_point> next_attempt_at() const { return next_attempt_at_; }

 private:
  StoredQueueState stored_;
  std::uint64_t known_upto_;
  std::deque<QueuedChange> queued_;
  bool in_flight_ = false;
  std::optional<Clock::time_point> next_attempt_at_;  // set while the oldest waits for a retry
};

}  // namespace connector::webhooks
