// The deliverer's set of enabled subscriptions (webhooks/subscription_set.h): brought to the
// rows the database lists, with their cursors, receivers and addresses; which subscriptions a
// record goes to; drops and operators' replays.
#define BOOST_TEST_MODULE webhook_subscriptions
#include <boost/test/unit_test.hpp>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "db/webhook_store.h"
#include "domain/history.h"
#include "webhooks/subscription_set.h"

using namespace connector;
using webhooks::Subscription;
using webhooks::SubscriptionSet;
using Ids = std::vector<std::uint64_t>;

namespace {

// webhook_subscriptions.statuses as its bits.
constexpr std::uint64_t kDeposit = 1, kPending = 2, kConfirmed = 4, kError = 8;

const std::string kAlice = "0x" + std::string(40, 'a');
const std::string kBob = "0x" + std::string(40, 'b');
const std::string kCarol = "0x" + std::string(40, 'c');

db::WebhookSubscriptionRow row(std::uint64_t id, std::string url, std::uint64_t statuses,
                               std::uint64_t acked_seq = 100) {
  db::WebhookSubscriptionRow r;
  r.id = id;
  r.url = std::move(url);
  r.statuses = statuses;
  r.secret = "whsec_" + std::to_string(id);
  r.acked_seq = acked_seq;
  return r;
}

// The addresses each subscription follows, and which subscriptions were asked for theirs.
struct Addresses {
  std::map<std::uint64_t, std::vector<std::string>> of;
  Ids asked;

  SubscriptionSet::LoadAddresses loader() {
    return [this](std::uint64_t id) {
      asked.push_back(id);
      return of[id];
    };
  }
};

domain::HistoryRecord record(const std::string& destination, domain::HistoryStatus status) {
  domain::HistoryRecord r;
  r.destination_address = destination;
  r.status = status;
  return r;
}

Ids ids(const std::vector<Subscription*>& subscriptions) {
  Ids out;
  for (const auto* s : subscriptions) out.push_back(s->id);
  return out;
}

Ids matching(SubscriptionSet& set, const std::string& destination, domain::HistoryStatus status) {
  return ids(set.matching(record(destination, status)));
}

Ids known(SubscriptionSet& set) {
  Ids out;
  for (const auto& [id, s] : set.all()) out.push_back(id);
  return out;
}

webhooks::QueuedChange change(std::uint64_t seq) {
  webhooks::QueuedChange c;
  c.seq = seq;
  return c;
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_listed_subscription_is_added_with_its_stored_state) {
  SubscriptionSet set({});
  Addresses addresses;
  addresses.of[7] = {"0xAbCdEf" + std::string(34, 'A')};
  auto r = row(7, "https://Exchange.Example.COM/hooks?x=1", kConfirmed | kError, 100);
  r.attempt = 2;
  r.retrying_since_us = 1'795'772'374'000'000;
  r.lost_before_seq = 3;
  r.delivered = 9;
  r.retried = 4;
  BOOST_TEST(set.sync({r}, addresses.loader()).empty());
  BOOST_TEST(addresses.asked == Ids{7});
  BOOST_TEST(known(set) == Ids{7});
  const Subscription* s = set.find(7);
  BOOST_REQUIRE(s != nullptr);
  BOOST_TEST(s->id == 7U);
  BOOST_TEST(s->url == "https://exchange.example.com/hooks?x=1");
  BOOST_TEST(!s->allow_listed);
  BOOST_TEST(s->statuses == 12U);
  BOOST_TEST(s->secret == "whsec_7");
  BOOST_TEST(s->lost_before_seq == 3U);
  BOOST_TEST(s->delivered == 9U);
  BOOST_TEST(s->retried == 4U);
  BOOST_TEST(s->stored_acked == 100U);
  BOOST_TEST(s->replay_applied == 0U);
  BOOST_TEST(!s->dirty);
  BOOST_TEST(s->delivered_unstored == 0U);
  BOOST_TEST(s->retried_unstored == 0U);
  BOOST_TEST(s->queue.known_upto() == 100U);
  BOOST_TEST(s->queue.acked_seq() == 100U);
  BOOST_TEST(s->queue.attempt() == 3U);
  const auto stored = s->queue.stored();
  BOOST_TEST(stored.retrying_since_us.value() == 1'795'772'374'000'000);
  BOOST_TEST(!stored.failing_since_us.has_value());  // 0: not failing
  BOOST_TEST(!s->queue.failing());
  BOOST_TEST(set.find(8) == nullptr);

  // Listed again: kept as it is (its queue too), its addresses not read again.
  set.find(7)->queue.offer(change(101));
  BOOST_TEST(set.sync({r}, addresses.loader()).empty());
  BOOST_TEST(addresses.asked == Ids{7});
  BOOST_TEST(set.find(7)->queue.queued() == 1U);
}

BOOST_AUTO_TEST_CASE(a_stored_failing_moment_is_restored) {
  SubscriptionSet set({});
  Addresses addresses;
  auto r = row(3, "https://exchange.example.com/", kDeposit);
  r.attempt = 500;
  r.retrying_since_us = 1'000'000;
  r.failing_since_us = 86'401'000'000;
  set.sync({r}, addresses.loader());
  const auto stored = set.find(3)->queue.stored();
  BOOST_TEST(set.find(3)->queue.failing());
  BOOST_TEST(stored.failing_since_us.value() == 86'401'000'000);
  BOOST_TEST(stored.attempt == 500U);
}

BOOST_AUTO_TEST_CASE(records_match_by_recipient_in_any_case_and_by_status_bits) {
  SubscriptionSet set({});
  Addresses addresses;
  addresses.of[1] = {"0x" + std::string(40, 'A'), kBob};
  addresses.of[2] = {kAlice};
  addresses.of[3] = {kCarol};
  set.sync({row(1, "https://one.example/", kDeposit | kConfirmed),
            row(2, "https://two.example/", kPending | kError),
            row(3, "https://three.example/", kDeposit | kPending | kConfirmed | kError)},
           addresses.loader());
  using S = domain::HistoryStatus;
  const std::string alice_upper = "0x" + std::string(40, 'A');
  BOOST_TEST(matching(set, kAlice, S::kDeposit) == Ids{1});
  BOOST_TEST(matching(set, alice_upper, S::kPending) == Ids{2});
  BOOST_TEST(matching(set, kAlice, S::kConfirmed) == Ids{1});
  BOOST_TEST(matching(set, "0x" + std::string(20, 'a') + std::string(20, 'A'), S::kError) ==
             Ids{2});
  BOOST_TEST(matching(set, kBob, S::kDeposit) == Ids{1});
  BOOST_TEST(matching(set, kBob, S::kPending).empty());
  BOOST_TEST(matching(set, kCarol, S::kError) == Ids{3});
  BOOST_TEST(matching(set, "0x" + std::string(40, 'd'), S::kConfirmed).empty());
  BOOST_TEST(matching(set, "", S::kConfirmed).empty());

  // Each status alone, by its bit.
  SubscriptionSet one({});
  Addresses one_address;
  one_address.of[9] = {kAlice};
  for (const auto& [bit, status] :
       std::vector<std::pair<std::uint64_t, S>>{{kDeposit, S::kDeposit},
                                                {kPending, S::kPending},
                                                {kConfirmed, S::kConfirmed},
                                                {kError, S::kError}}) {
    one.sync({row(9, "https://nine.example/", bit)}, one_address.loader());
    for (const S other : {S::kDeposit, S::kPending, S::kConfirmed, S::kError}) {
      const Ids expected = other == status ? Ids{9} : Ids{};
      BOOST_TEST(matching(one, kAlice, other) == expected, bit << " " << static_cast<int>(other));
    }
    one.clear();
  }
}

BOOST_AUTO_TEST_CASE(follows_is_matching_for_one_subscription) {
  SubscriptionSet set({});
  Addresses addresses;
  addresses.of[1] = {kAlice};
  addresses.of[2] = {kBob};
  set.sync({row(1, "https://one.example/", kConfirmed), row(2, "https://two.example/", kError)},
           addresses.loader());
  using S = domain::HistoryStatus;
  const Subscription& one = *set.find(1);
  const Subscription& two = *set.find(2);
  BOOST_TEST(set.follows(one, record("0x" + std::string(40, 'A'), S::kConfirmed)));
  BOOST_TEST(!set.follows(one, record(kAlice, S::kError)));
  BOOST_TEST(!set.follows(one, record(kBob, S::kConfirmed)));
  BOOST_TEST(set.follows(two, record(kBob, S::kError)));
  BOOST_TEST(!set.follows(two, record(kAlice, S::kError)));
  BOOST_TEST(!set.follows(two, record(kCarol, S::kError)));
}

BOOST_AUTO_TEST_CASE(a_subscription_no_longer_listed_is_dropped_with_its_addresses) {
  SubscriptionSet set({});
  Addresses addresses;
  addresses.of[1] = {kAlice};
  addresses.of[2] = {kAlice, kBob};
  addresses.of[3] = {kCarol};
  const auto r1 = row(1, "https://one.example/", kConfirmed);
  const auto r2 = row(2, "https://two.example/", kConfirmed, 200);
  const auto r3 = row(3, "https://three.example/", kConfirmed);
  set.sync({r1, r2, r3}, addresses.loader());
  using S = domain::HistoryStatus;
  BOOST_TEST(matching(set, kAlice, S::kConfirmed) == (Ids{1, 2}));
  set.find(2)->queue.offer(change(201));

  BOOST_TEST(set.sync({r1, r3}, addresses.loader()) == Ids{2});
  BOOST_TEST(known(set) == (Ids{1, 3}));
  BOOST_TEST(set.find(2) == nullptr);
  BOOST_TEST(matching(set, kAlice, S::kConfirmed) == Ids{1});
  BOOST_TEST(matching(set, kBob, S::kConfirmed).empty());
  BOOST_TEST(matching(set, kCarol, S::kConfirmed) == Ids{3});

  // Listed again (enabled again): added anew, from the stored cursor, its addresses read again.
  addresses.asked.clear();
  BOOST_TEST(set.sync({r1, r2, r3}, addresses.loader()).empty());
  BOOST_TEST(addresses.asked == Ids{2});
  BOOST_TEST(set.find(2)->queue.queued() == 0U);
  BOOST_TEST(set.find(2)->queue.known_upto() == 200U);
  BOOST_TEST(matching(set, kAlice, S::kConfirmed) == (Ids{1, 2}));

  // None listed: all dropped, in id order.
  BOOST_TEST(set.sync({}, addresses.loader()) == (Ids{1, 2, 3}));
  BOOST_TEST(known(set).empty());
  BOOST_TEST(matching(set, kAlice, S::kConfirmed).empty());
}

BOOST_AUTO_TEST_CASE(a_known_subscription_takes_its_lost_before_seq_from_each_sync) {
  SubscriptionSet set({});
  Addresses addresses;
  auto r = row(4, "https://four.example/", kConfirmed);
  set.sync({r}, addresses.loader());
  r.lost_before_seq = 77;
  BOOST_TEST(set.sync({r}, addresses.loader()).empty());
  BOOST_TEST(set.find(4)->lost_before_seq == 77U);
}

// An operator's replay (webhook_queues.replay_from_seq) is applied once per value: a sync that
// lists the same value again (the deliverer has not stored yet, or the store's clearing of it
// has not been read back) leaves the queue alone. Once the deliverer has stored it
// (Deliverer::store sets replay_applied back to 0, and its statement clears replay_from_seq if
// it still holds that value), a row that lists it again is a new request and is applied again.
BOOST_AUTO_TEST_CASE(a_replay_is_applied_once_per_value) {
  SubscriptionSet set({});
  Addresses addresses;
  auto r = row(5, "https://five.example/", kConfirmed, 100);
  set.sync({r}, addresses.loader());
  Subscription& s = *set.find(5);
  s.queue.offer(change(101));
  s.queue.sending();

  r.replay_from_seq = 50;
  BOOST_TEST(set.sync({r}, addresses.loader()) == Ids{5});  // its flight to be cancelled
  BOOST_TEST(s.queue.queued() == 0U);
  BOOST_TEST(!s.queue.in_flight());
  BOOST_TEST(s.queue.known_upto() == 49U);
  BOOST_TEST(s.queue.acked_seq() == 49U);
  BOOST_TEST(s.replay_applied == 50U);
  BOOST_TEST(s.dirty);
  BOOST_TEST(s.stored_acked == 100U);  // what the database holds, until the store

  // The same value again: not applied again.
  s.queue.offer(change(50));
  BOOST_TEST(set.sync({r}, addresses.loader()).empty());
  BOOST_TEST(s.queue.queued() == 1U);
  BOOST_TEST(s.replay_applied == 50U);

  // Another value: applied.
  r.replay_from_seq = 60;
  BOOST_TEST(set.sync({r}, addresses.loader()) == Ids{5});
  BOOST_TEST(s.queue.queued() == 0U);
  BOOST_TEST(s.queue.acked_seq() == 59U);
  BOOST_TEST(s.replay_applied == 60U);

  // Stored (replay_applied back to 0): the same value listed again is applied again.
  s.replay_applied = 0;
  s.dirty = false;
  s.queue.offer(change(60));
  BOOST_TEST(set.sync({r}, addresses.loader()) == Ids{5});
  BOOST_TEST(s.queue.queued() == 0U);
  BOOST_TEST(s.replay_applied == 60U);
  BOOST_TEST(s.dirty);

  // Cleared in the database (0): nothing happens, whatever replay_applied holds.
  r.replay_from_seq = 0;
  s.queue.offer(change(60));
  BOOST_TEST(set.sync({r}, addresses.loader()).empty());
  BOOST_TEST(s.queue.queued() == 1U);
  s.replay_applied = 0;
  BOOST_TEST(set.sync({r}, addresses.loader()).empty());
  BOOST_TEST(s.queue.queued() == 1U);
}

BOOST_AUTO_TEST_CASE(a_subscription_added_with_a_replay_starts_from_it) {
  SubscriptionSet set({});
  Addresses addresses;
  auto r = row(6, "https://six.example/", kConfirmed, 100);
  r.replay_from_seq = 30;
  // Nothing in flight to cancel: not among the dropped.
  BOOST_TEST(set.sync({r}, addresses.loader()).empty());
  const Subscription& s = *set.find(6);
  BOOST_TEST(s.queue.known_upto() == 29U);
  BOOST_TEST(s.queue.acked_seq() == 29U);
  BOOST_TEST(s.replay_applied == 30U);
  BOOST_TEST(s.dirty);
  BOOST_TEST(s.stored_acked == 100U);
  BOOST_TEST(set.sync({r}, addresses.loader()).empty());
  BOOST_TEST(s.queue.known_upto() == 29U);
}

BOOST_AUTO_TEST_CASE(a_row_whose_url_is_refused_is_not_added) {
  SubscriptionSet set({"hooks.internal", "127.0.0.1"});
  Addresses addresses;
  addresses.of[1] = {kAlice};
  addresses.of[2] = {kAlice};
  addresses.of[3] = {kAlice};
  const std::vector<db::WebhookSubscriptionRow> rows = {
      row(1, "http://exchange.example.com/hook", kConfirmed),  // http, not allow-listed
      row(2, "https://user:pw@exchange.example.com/", kConfirmed),
      row(3, "https://exchange.example.com/hook", kConfirmed)};
  BOOST_TEST(set.sync(rows, addresses.loader()).empty());
  BOOST_TEST(known(set) == Ids{3});
  BOOST_TEST(addresses.asked == Ids{3});
  BOOST_TEST(matching(set, kAlice, domain::HistoryStatus::kConfirmed) == Ids{3});
  // Not tried again (nor logged again) at the next sync: the configuration is read at start.
  BOOST_TEST(set.sync(rows, addresses.loader()).empty());
  BOOST_TEST(known(set) == Ids{3});
  BOOST_TEST(addresses.asked == Ids{3});
}

BOOST_AUTO_TEST_CASE(allow_listed_only_for_hosts_in_the_list) {
  SubscriptionSet set({"hooks.internal", "127.0.0.1", "::1"});
  Addresses addresses;
  set.sync(
      {row(1, "http://hooks.internal:8080/x", kConfirmed),
       row(2, "https://hooks.internal/", kConfirmed), row(3, "http://127.0.0.1:9000/", kConfirmed),
       row(4, "https://exchange.example.com/", kConfirmed),
       row(5, "https://hooks.internal.example.com/", kConfirmed),
       row(6, "http://[::1]:8081/r", kConfirmed)},
      addresses.loader());
  BOOST_TEST(known(set) == (Ids{1, 2, 3, 4, 5, 6}));
  BOOST_TEST(set.find(1)->allow_listed);
  BOOST_TEST(set.find(1)->url == "http://hooks.internal:8080/x");
  BOOST_TEST(set.find(2)->allow_listed);
  BOOST_TEST(set.find(3)->allow_listed);
  BOOST_TEST(!set.find(4)->allow_listed);
  BOOST_TEST(!set.find(5)->allow_listed);
  BOOST_TEST(set.find(6)->allow_listed);
}

BOOST_AUTO_TEST_CASE(allow_listed_whatever_the_case_the_list_writes_the_host_in) {
  // The receiver URL's rule takes the list case-insensitively (webhooks/receiver_url.h), so
  // allow_listed must too: else an http URL it accepted is sent with https only, never
  // delivered.
  SubscriptionSet set({"Hooks.Internal"});
  Addresses addresses;
  set.sync({row(1, "http://HOOKS.internal/x", kConfirmed)}, addresses.loader());
  BOOST_REQUIRE(set.find(1) != nullptr);
  BOOST_TEST(set.find(1)->url == "http://hooks.internal/x");
  BOOST_TEST(set.find(1)->allow_listed);
}

BOOST_AUTO_TEST_CASE(clear_forgets_every_subscription) {
  SubscriptionSet set({});
  Addresses addresses;
  addresses.of[1] = {kAlice};
  set.sync({row(1, "https://one.example/", kConfirmed)}, addresses.loader());
  set.clear();
  BOOST_TEST(known(set).empty());
  BOOST_TEST(matching(set, kAlice, domain::HistoryStatus::kConfirmed).empty());
  // The next sync adds it again, its addresses read again.
  BOOST_TEST(set.sync({row(1, "https://one.example/", kConfirmed)}, addresses.loader()).empty());
  BOOST_TEST(addresses.asked == (Ids{1, 1}));
  BOOST_TEST(matching(set, kAlice, domain::HistoryStatus::kConfirmed) == Ids{1});
}
