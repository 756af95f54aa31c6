// The Deliverer's reading of the change feed (webhooks/deliverer.h): the shared read that offers
// each change to the queues that follow the feed, the catch-up of queues behind it, and the
// holes it passed over, looked at again (a transaction that committed after a later one's).
#include <algorithm>
#include <span>
#include <unordered_set>
#include <vector>

#include "db/change_feed.h"
#include "util/log.h"
#include "webhooks/deliverer.h"

namespace connector::webhooks {

bool Deliverer::read_feed() {
  const auto changes = db::read_feed(*db_, scan_position_, kBatch);
  std::vector<std::uint64_t> seqs;
  seqs.reserve(changes.size());
  for (const auto& change : changes) seqs.push_back(change.seq);
  if (!seqs.empty()) feed_end_ = std::max(feed_end_, seqs.back());
  const auto verdict = order_.publishable(scan_position_, seqs, db::FeedOrder::Clock::now());
  if (verdict.passed_over > 0) {
    util::log_warning("the webhook deliverer passed over " + std::to_string(verdict.passed_over) +
                      " feed positions after " + std::to_string(scan_position_) +
                      " (a hole that did not fill within events_gap_wait_ms); it keeps looking "
                      "at them for an hour");
    watch_holes(scan_position_, std::span(seqs).first(verdict.publish), Clock::now());
  }
  // The queues that have seen the feed up to here take what follows; one that is full drops
  // out and reads on by itself (catch_up).
  std::unordered_set<std::uint64_t> following;
  for (const auto& [id, s] : subscriptions_.all()) {
    if (s.queue.follows(scan_position_)) following.insert(id);
  }
  for (std::size_t i = 0; i < verdict.publish; ++i) {
    const auto& change = changes[i];
    if (!change.record) continue;
    for (Subscription* s : subscriptions_.matching(*change.record)) {
      if (!following.contains(s->id)) continue;
      if (!s->queue.offer({change.seq, change.changed_us, *change.record})) following.erase(s->id);
    }
  }
  if (verdict.publish > 0) scan_position_ = changes[verdict.publish - 1].seq;
  for (const std::uint64_t id : following)
    subscriptions_.find(id)->queue.known_through(scan_position_);
  return changes.size() == kBatch && verdict.publish == changes.size();
}

// A queue behind the shared read (it was full, or replayed) reads the feed up to the shared
// read's position by itself, a batch at a time, once it has room for one.
void Deliverer::catch_up() {
  static_assert(SubscriptionQueue::kMaxQueued >= std::size_t{2} * kBatch, "room for a batch");
  // Round robin from where the last round stopped: every queue behind gets its turn.
  auto& all = subscriptions_.all();
  std::size_t reads = 0;
  auto it = all.upper_bound(catch_up_after_);
  for (std::size_t seen = 0; seen < all.size() && reads < kCatchUpsPerRound; ++seen, ++it) {
    if (it == all.end()) it = all.begin();
    catch_up_after_ = it->first;
    auto& s = it->second;
    if (s.queue.follows(scan_position_) ||
        s.queue.queued() > SubscriptionQueue::kMaxQueued - kBatch) {
      continue;
    }
    ++reads;
    read_behind(s);
  }
}

// One batch of the feed after the queue's known_upto, up to the shared read's position.
void Deliverer::read_behind(Subscription& s) {
  auto& queue = s.queue;
  const auto changes = db::read_feed(*db_, queue.known_upto(), kBatch);
  bool reached = changes.size() < kBatch;
  std::uint64_t read_to = queue.known_upto();
  for (const auto& change : changes) {
    if (change.seq > scan_position_) {
      reached = true;
      break;
    }
    // The room was checked: a whole batch fits.
    if (change.record && subscriptions_.follows(s, *change.record)) {
      queue.offer({change.seq, change.changed_us, *change.record});
    }
    read_to = change.seq;
  }
  queue.known_through(reached ? scan_position_ : read_to);
}

void Deliverer::watch_holes(std::uint64_t after, std::span<const std::uint64_t> seqs,
                            Clock::time_point now) {
  for (const std::uint64_t seq : seqs) {
    for (std::uint64_t missing = after + 1; missing < seq && holes_.size() < kMaxWatched;
         ++missing) {
      holes_.emplace(missing, now);
    }
    after = seq;
  }
}

void Deliverer::check_late(Clock::time_point now) {
  next_late_ = now + kLateEvery;
  std::size_t checks = 0;
  for (auto it = holes_.begin(); it != holes_.end() && checks < kLateChecks; ++checks) {
    const std::uint64_t seq = it->first;
    const auto found = db::read_feed(*db_, seq - 1, 1);
    if (found.empty() || found.front().seq != seq) {
      it = now - it->second > kLateHorizon ? holes_.erase(it) : std::next(it);
      continue;
    }
    it = holes_.erase(it);
    const auto& change = found.front();
    if (!change.record) continue;
    util::log_warning("the webhook deliverer found change " + std::to_string(seq) +
                      ", committed after later ones it had delivered: sent now, behind them");
    for (Subscription* s : subscriptions_.matching(*change.record)) {
      s->queue.offer_late({change.seq, change.changed_us, *change.record});
      s->dirty = true;  // its cursor goes back before it until it is acknowledged
    }
  }
}

}  // namespace connector::webhooks
