// One subscription's queue of changes to deliver (webhooks/subscription_queue.h): what it takes
// from the feed, what it says is due, its attempts and retry times, and the cursor it stores.
#define BOOST_TEST_MODULE webhook_queue
#include <boost/test/unit_test.hpp>
#include <chrono>
#include <cstdint>
#include <optional>

#include "webhooks/subscription_queue.h"

using namespace connector::webhooks;
using std::chrono::hours;
using std::chrono::microseconds;
using std::chrono::milliseconds;
using Clock = SubscriptionQueue::Clock;

namespace {

// A steady-clock moment and the wall clock's unix microseconds of the same instant.
const Clock::time_point kT0 = Clock::time_point{} + hours(1000);
constexpr std::int64_t kU0 = 1'795'772'374'000'000;
constexpr std::int64_t kHourUs = 3'600'000'000;

QueuedChange change(std::uint64_t seq) {
  QueuedChange c;
  c.seq = seq;
  c.changed_us = kU0 - 1'000'000 + static_cast<std::int64_t>(seq);
  c.record.id = seq * 10;
  return c;
}

// The seq of a change handed out, 0 for none.
std::uint64_t seq_of(const QueuedChange* c) { return c == nullptr ? 0 : c->seq; }

StoredQueueState state(std::uint64_t acked_seq, std::uint32_t attempt = 0,
                       std::optional<std::int64_t> retrying_since_us = std::nullopt,
                       std::optional<std::int64_t> failing_since_us = std::nullopt) {
  return {acked_seq, attempt, retrying_since_us, failing_since_us};
}

void check_stored(const SubscriptionQueue& q, const StoredQueueState& expected) {
  const StoredQueueState s = q.stored();
  BOOST_TEST(s.acked_seq == expected.acked_seq);
  BOOST_TEST(s.attempt == expected.attempt);
  BOOST_TEST((s.retrying_since_us == expected.retrying_since_us));
  BOOST_TEST((s.failing_since_us == expected.failing_since_us));
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_new_queue_knows_the_feed_up_to_its_stored_cursor) {
  const SubscriptionQueue q(state(10));
  BOOST_TEST(q.known_upto() == 10U);
  BOOST_TEST(q.follows(9));
  BOOST_TEST(q.follows(10));
  BOOST_TEST(!q.follows(11));
  BOOST_TEST(q.acked_seq() == 10U);
  BOOST_TEST(q.queued() == 0U);
  BOOST_TEST(q.has_room());
  BOOST_TEST(q.oldest() == nullptr);
  BOOST_TEST(!q.oldest_changed_us().has_value());
  BOOST_TEST(q.due(kT0) == nullptr);
  BOOST_TEST(!q.in_flight());
  BOOST_TEST(q.attempt() == 1U);
  BOOST_TEST(!q.failing());
  BOOST_TEST(!q.next_attempt_at().has_value());
  check_stored(q, state(10));
}

BOOST_AUTO_TEST_CASE(changes_after_known_upto_are_queued_in_order_and_the_rest_ignored) {
  SubscriptionQueue q(state(10));
  BOOST_TEST(q.offer(change(12)));
  BOOST_TEST(q.offer(change(15)));
  BOOST_TEST(q.known_upto() == 15U);
  BOOST_TEST(q.queued() == 2U);
  BOOST_TEST(seq_of(q.oldest()) == 12U);
  BOOST_TEST(q.oldest()->record.id == 120U);
  BOOST_TEST(q.oldest_changed_us().value() == kU0 - 1'000'000 + 12);
  // At or below known_upto: queued or acknowledged already, so taken as done and not queued
  // again (13 included: the feed up to 15 has been offered, 13 was not one it follows).
  BOOST_TEST(q.offer(change(15)));
  BOOST_TEST(q.offer(change(13)));
  BOOST_TEST(q.offer(change(10)));
  BOOST_TEST(q.offer(change(3)));
  BOOST_TEST(q.queued() == 2U);
  BOOST_TEST(q.known_upto() == 15U);
  // The cursor stays before the oldest change not acknowledged.
  BOOST_TEST(q.acked_seq() == 11U);
  check_stored(q, state(11));
}

BOOST_AUTO_TEST_CASE(known_through_moves_known_upto_forward_only) {
  SubscriptionQueue q(state(10));
  q.known_through(20);
  BOOST_TEST(q.known_upto() == 20U);
  BOOST_TEST(q.follows(20));
  q.known_through(18);
  BOOST_TEST(q.known_upto() == 20U);
  // Nothing queued: the feed up to known_upto held nothing for it, so that is the cursor.
  BOOST_TEST(q.acked_seq() == 20U);
  check_stored(q, state(20));
  BOOST_TEST(q.offer(change(20)));  // not after known_upto: ignored
  BOOST_TEST(q.queued() == 0U);
  BOOST_TEST(q.offer(change(25)));
  q.known_through(30);
  BOOST_TEST(q.known_upto() == 30U);
  BOOST_TEST(q.acked_seq() == 24U);
}

BOOST_AUTO_TEST_CASE(a_full_queue_refuses_and_knows_the_feed_up_to_the_change_before) {
  SubscriptionQueue q(state(0));
  for (std::uint64_t seq = 1; seq <= SubscriptionQueue::kMaxQueued; ++seq) {
    BOOST_REQUIRE(q.offer(change(seq)));
  }
  BOOST_TEST(q.queued() == 1000U);
  BOOST_TEST(!q.has_room());
  BOOST_TEST(q.known_upto() == 1000U);
  BOOST_TEST(!q.offer(change(1005)));
  BOOST_TEST(q.known_upto() == 1004U);
  BOOST_TEST(q.queued() == 1000U);
  BOOST_TEST(!q.follows(1005));
  // At or below known_upto it answers true without queueing, full or not (the caller stopped
  // offering at the first false anyway).
  BOOST_TEST(q.offer(change(1003)));
  BOOST_TEST(q.queued() == 1000U);
  // One delivered: room again, and 1005 is taken when it is offered again (catch_up).
  q.sending();
  q.acknowledged();
  BOOST_TEST(q.has_room());
  BOOST_TEST(q.offer(change(1005)));
  BOOST_TEST(q.known_upto() == 1005U);
  BOOST_TEST(q.queued() == 1000U);
  BOOST_TEST(seq_of(q.oldest()) == 2U);
  BOOST_TEST(q.acked_seq() == 1U);
}

BOOST_AUTO_TEST_CASE(the_oldest_change_is_due_when_none_is_in_flight) {
  SubscriptionQueue q(state(10));
  BOOST_TEST(q.due(kT0) == nullptr);  // nothing queued
  q.offer(change(11));
  q.offer(change(12));
  BOOST_TEST(q.due(kT0) == q.oldest());
  BOOST_TEST(seq_of(q.due(kT0)) == 11U);
  BOOST_TEST(q.attempt() == 1U);
  q.sending();
  BOOST_TEST(q.in_flight());
  BOOST_TEST(q.due(kT0) == nullptr);
  BOOST_TEST(q.due(kT0 + hours(100)) == nullptr);
  // A transfer cancelled: the same change is due again, still its first attempt.
  q.cancel_in_flight();
  BOOST_TEST(!q.in_flight());
  BOOST_TEST(seq_of(q.due(kT0)) == 11U);
  BOOST_TEST(q.attempt() == 1U);
}

BOOST_AUTO_TEST_CASE(an_acknowledgement_pops_the_oldest_and_clears_its_retry_state) {
  SubscriptionQueue q(state(10));
  q.offer(change(11));
  q.offer(change(14));
  q.sending();
  q.failed(kT0, kU0, 0.0);
  q.sending();
  q.failed(kT0 + milliseconds(500), kU0 + 500'000, 0.0);
  BOOST_TEST(q.attempt() == 3U);
  BOOST_TEST(q.next_attempt_at().has_value());
  check_stored(q, state(10, 2, kU0));
  q.sending();
  q.acknowledged();
  BOOST_TEST(!q.in_flight());
  BOOST_TEST(q.queued() == 1U);
  BOOST_TEST(seq_of(q.oldest()) == 14U);
  BOOST_TEST(q.attempt() == 1U);
  BOOST_TEST(!q.next_attempt_at().has_value());
  BOOST_TEST(q.acked_seq() == 13U);
  check_stored(q, state(13));
  // The next change is due at once (no retry time carried over).
  BOOST_TEST(seq_of(q.due(kT0)) == 14U);
  q.sending();
  q.acknowledged();
  BOOST_TEST(q.queued() == 0U);
  BOOST_TEST(q.oldest() == nullptr);
  BOOST_TEST(!q.oldest_changed_us().has_value());
  BOOST_TEST(q.acked_seq() == 14U);
  check_stored(q, state(14));
  // With nothing queued (a replay while it was in flight) it only ends the flight.
  q.sending();
  q.acknowledged();
  BOOST_TEST(!q.in_flight());
  BOOST_TEST(q.acked_seq() == 14U);
}

BOOST_AUTO_TEST_CASE(a_failure_numbers_the_attempt_and_waits_the_retry_delay) {
  SubscriptionQueue q(state(10));
  q.offer(change(11));
  q.sending();
  q.failed(kT0, kU0, 0.0);
  BOOST_TEST(!q.in_flight());
  BOOST_TEST(q.attempt() == 2U);
  // Attempt 1 failed: its step is 1 s, a draw of 0 waits half of it.
  BOOST_TEST((q.next_attempt_at() == kT0 + milliseconds(500)));
  BOOST_TEST(q.due(kT0) == nullptr);
  BOOST_TEST(q.due(kT0 + milliseconds(499)) == nullptr);
  BOOST_TEST(seq_of(q.due(kT0 + milliseconds(500))) == 11U);
  BOOST_TEST(q.acked_seq() == 10U);
  check_stored(q, state(10, 1, kU0));

  // Attempt 2 (step 2 s), a draw of 0.5: 1000 + 500 ms. retrying_since stays the first failure.
  const auto t1 = kT0 + milliseconds(500);
  q.sending();
  q.failed(t1, kU0 + 500'000, 0.5);
  BOOST_TEST(q.attempt() == 3U);
  BOOST_TEST((q.next_attempt_at() == t1 + milliseconds(1500)));
  check_stored(q, state(10, 2, kU0));

  // Attempt 3 (step 4 s), a draw of 0.25: 2000 + 500 ms.
  const auto t2 = t1 + milliseconds(1500);
  q.sending();
  q.failed(t2, kU0 + 2'000'000, 0.25);
  BOOST_TEST(q.attempt() == 4U);
  BOOST_TEST((q.next_attempt_at() == t2 + milliseconds(2500)));
  BOOST_TEST(seq_of(q.due(t2 + milliseconds(2500))) == 11U);
  check_stored(q, state(10, 3, kU0));
  BOOST_TEST(!q.failing());
}

BOOST_AUTO_TEST_CASE(failing_after_24_hours_of_failures_from_retrying_since_on_the_wall_clock) {
  SubscriptionQueue q(state(10));
  q.offer(change(11));
  q.sending();
  q.failed(kT0, kU0, 0.0);
  // The steady clock passed in does not count towards failing: only now_us does.
  q.sending();
  q.failed(kT0 + hours(48), kU0 + 24 * kHourUs - 1, 0.0);
  BOOST_TEST(!q.failing());
  check_stored(q, state(10, 2, kU0));
  q.sending();
  q.failed(kT0, kU0 + 24 * kHourUs, 0.0);
  BOOST_TEST(q.failing());
  check_stored(q, state(10, 3, kU0, kU0 + 24 * kHourUs));
  // Set once: later failures keep the moment it became failing.
  q.sending();
  q.failed(kT0, kU0 + 25 * kHourUs, 0.0);
  BOOST_TEST(q.failing());
  check_stored(q, state(10, 4, kU0, kU0 + 24 * kHourUs));
  // A 2xx ends it.
  q.sending();
  q.acknowledged();
  BOOST_TEST(!q.failing());
  check_stored(q, state(11));
}

BOOST_AUTO_TEST_CASE(a_replay_drops_the_queue_and_restarts_from_its_seq) {
  SubscriptionQueue q(state(10));
  q.offer(change(11));
  q.offer(change(12));
  q.known_through(20);
  q.sending();
  q.failed(kT0, kU0, 0.0);
  q.sending();
  q.replay_from(5);
  BOOST_TEST(q.queued() == 0U);
  BOOST_TEST(!q.in_flight());
  BOOST_TEST(!q.next_attempt_at().has_value());
  BOOST_TEST(q.known_upto() == 4U);
  BOOST_TEST(q.follows(4));
  BOOST_TEST(!q.follows(5));
  BOOST_TEST(q.acked_seq() == 4U);
  BOOST_TEST(q.attempt() == 1U);
  check_stored(q, state(4));
  // Read again from 5 on.
  BOOST_TEST(q.offer(change(5)));
  BOOST_TEST(q.offer(change(11)));
  BOOST_TEST(seq_of(q.due(kT0)) == 5U);
  // Past what it knew: the changes before are skipped. From 0: everything.
  q.replay_from(100);
  BOOST_TEST(q.known_upto() == 99U);
  BOOST_TEST(q.acked_seq() == 99U);
  q.replay_from(0);
  BOOST_TEST(q.known_upto() == 0U);
  BOOST_TEST(q.acked_seq() == 0U);
}

BOOST_AUTO_TEST_CASE(a_replay_keeps_failing_until_a_2xx) {
  // As designed (webhook_queues.failing_since_us: "cleared by a 2xx"): a replay restarts the
  // attempts and the 24 h but a failing subscription stays failing until a delivery succeeds.
  SubscriptionQueue q(state(10, 40, kU0, kU0 + 24 * kHourUs));
  BOOST_TEST(q.failing());
  q.replay_from(8);
  BOOST_TEST(q.failing());
  check_stored(q, state(7, 0, std::nullopt, kU0 + 24 * kHourUs));
  q.offer(change(8));
  q.sending();
  q.failed(kT0, kU0 + 30 * kHourUs, 0.0);
  check_stored(q, state(7, 1, kU0 + 30 * kHourUs, kU0 + 24 * kHourUs));
  q.sending();
  q.acknowledged();
  BOOST_TEST(!q.failing());
  check_stored(q, state(8));
}

BOOST_AUTO_TEST_CASE(a_queue_restored_with_failed_attempts_goes_on_from_them) {
  SubscriptionQueue q(state(7, 3, kU0));
  BOOST_TEST(q.known_upto() == 7U);
  BOOST_TEST(q.attempt() == 4U);
  BOOST_TEST(!q.failing());
  // No retry time survives a restart or a takeover: the change is due as soon as it is read.
  BOOST_TEST(!q.next_attempt_at().has_value());
  q.offer(change(9));
  BOOST_TEST(seq_of(q.due(kT0)) == 9U);
  BOOST_TEST(q.acked_seq() == 8U);
  // Its 4th attempt fails: step 8 s, a draw of 0 waits 4 s; retrying_since is the stored one.
  q.sending();
  q.failed(kT0, kU0 + 1'000'000, 0.0);
  BOOST_TEST(q.attempt() == 5U);
  BOOST_TEST((q.next_attempt_at() == kT0 + milliseconds(4000)));
  check_stored(q, state(8, 4, kU0));
  // The 24 h are counted from the stored retrying_since.
  q.sending();
  q.failed(kT0, kU0 + 24 * kHourUs, 0.0);
  BOOST_TEST(q.failing());
  check_stored(q, state(8, 5, kU0, kU0 + 24 * kHourUs));
}

BOOST_AUTO_TEST_CASE(a_queue_restored_failing_stays_failing_with_its_stored_moment) {
  const std::int64_t since = kU0 + 24 * kHourUs;
  SubscriptionQueue q(state(7, 900, kU0, since));
  BOOST_TEST(q.failing());
  BOOST_TEST(q.attempt() == 901U);
  q.offer(change(8));
  q.sending();
  q.failed(kT0, kU0 + 50 * kHourUs, 0.0);
  // The longest step, 1 h: half of it with a draw of 0.
  BOOST_TEST((q.next_attempt_at() == kT0 + milliseconds(1'800'000)));
  check_stored(q, state(7, 901, kU0, since));
}

BOOST_AUTO_TEST_CASE(a_failure_without_a_stored_retrying_since_starts_it) {
  // A row with attempts but no retrying_since_us (NULL): the first failure here sets it.
  SubscriptionQueue q(state(7, 2));
  q.offer(change(8));
  q.sending();
  q.failed(kT0, kU0, 0.0);
  check_stored(q, state(7, 3, kU0));
  BOOST_TEST(!q.failing());
}

BOOST_AUTO_TEST_CASE(a_late_change_goes_behind_the_one_in_flight_and_holds_the_cursor_back) {
  SubscriptionQueue q(state(10));
  q.offer(change(12));
  q.offer(change(14));
  q.known_through(20);
  q.sending();  // 12 in flight
  q.offer_late(change(11));
  BOOST_TEST(q.acked_seq() == 10U);  // 11 not acknowledged: the cursor stays before it
  q.acknowledged();                  // 12
  BOOST_TEST(seq_of(q.due(kT0)) == 11U);
  BOOST_TEST(q.acked_seq() == 10U);
  q.sending();
  q.acknowledged();  // 11
  BOOST_TEST(seq_of(q.due(kT0)) == 14U);
  BOOST_TEST(q.acked_seq() == 13U);
  // Already queued, at or below the starting cursor, or not read past yet: nothing.
  q.offer_late(change(14));
  q.offer_late(change(9));
  q.offer_late(change(21));
  BOOST_TEST(q.queued() == 1U);
  q.offer_late(change(17));  // nothing in flight: in seq order
  BOOST_TEST(seq_of(q.due(kT0)) == 14U);
  BOOST_TEST(q.queued() == 2U);
}

BOOST_AUTO_TEST_CASE(retry_now_makes_a_waiting_change_due_and_keeps_its_attempt) {
  SubscriptionQueue q(state(10));
  q.offer(change(11));
  q.sending();
  q.failed(kT0, kU0, 0.5);
  q.sending();
  q.failed(kT0, kU0, 0.5);
  BOOST_TEST(seq_of(q.due(kT0)) == 0U);  // waiting for its third attempt
  q.retry_now();
  BOOST_TEST(seq_of(q.due(kT0)) == 11U);
  BOOST_TEST(q.attempt() == 3U);
}
