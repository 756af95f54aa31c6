#pragma once
// connector-webhooks' loop: one deliverer per node, one of them delivering for the fleet (the
// lease on the primary, db/webhook_store.h). The holder, every webhooks_poll_ms:
// - renews the lease every second, and stops sending once it has not managed to for half the
//   lease (the primary hung or unreachable: another node may take over after the whole lease);
// - reloads the enabled subscriptions every second (webhooks/subscription_set.h);
// - reads the change feed once for all of them, in seq order, holes waited for like the event
//   publisher (db/feed_order.h), and queues each change on the subscriptions that follow its
//   recipient and status; a queue that is full, or restarted by a replay, reads its own way
//   back (catch_up);
// - sends each queue's oldest change when it is due, one in flight per subscription
//   (webhooks/http_sender.h), signed (webhooks/signature.h), and handles the outcomes: a 2xx
//   moves the queue on, anything else schedules a retry (webhooks/retry_schedule.h);
// - stores the cursors (at most every kStoreEvery) fenced by the lease token, and writes the
//   metrics file every kMetricsEvery.
// Delivery is at least once: a change acknowledged but not stored yet when the holder dies is
// sent again by the next one, with the same Connector-Event-Id.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "config/config.h"
#include "db/connection.h"
#include "db/feed_order.h"
#include "domain/reference_data.h"
#include "webhooks/http_sender.h"
#include "webhooks/metrics_file.h"
#include "webhooks/subscription_set.h"

namespace connector::webhooks {

class Deliverer {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr std::chrono::milliseconds kLeaseEvery{1000};
  static constexpr std::chrono::milliseconds kSubscriptionsEvery{1000};
  static constexpr std::chrono::milliseconds kStoreEvery{100};
  // A cursor that only moved past changes nobody follows.
  static constexpr std::chrono::milliseconds kCursorsEvery{1000};
  static constexpr std::chrono::milliseconds kMetricsEvery{5000};
  static constexpr std::chrono::milliseconds kReferenceEvery{10000};
  static constexpr std::uint32_t kBatch = 500;  // changes read per statement
  static constexpr std::size_t kCatchUpsPerRound = 8;
  // Feed positions passed over as holes are looked at again for this long (a transaction that
  // commits later than that after a later change is not seen), at most kLateChecks a round.
  static constexpr std::chrono::minutes kLateHorizon{60};
  static constexpr std::chrono::milliseconds kLateEvery{1000};
  static constexpr std::size_t kLateChecks = 50;
  static constexpr std::size_t kMaxWatched = 10000;

  // holder: this deliverer's name in the lease row ("host pid").
  Deliverer(const config::Config& config, std::string holder);
  ~Deliverer();

  // Delivers (or waits to) until `stop` is set; then stores, and frees the lease.
  void run(const std::atomic<bool>& stop);

 private:
  // Returns whether it asked the database (a round of a deliverer that does not hold the
  // lease only renews it when due).
  bool round(Clock::time_point now);
  void renew_lease(Clock::time_point now);
  void become_holder();
  void stop_holding();
  bool lease_fresh(Clock::time_point now) const;
  bool sending_allowed(Clock::time_point now) const;
  void cancel_in_flight();
  void reload_subscriptions();
  void reload_reference();
  // Returns whether a whole batch was read (more may be waiting).
  bool read_feed();
  void catch_up();
  void read_behind(Subscription& s);
  // Remembers the positions the shared read passed over (holes that did not fill in
  // events_gap_wait_ms), and delivers what shows up there later (SubscriptionQueue::offer_late).
  void watch_holes(std::uint64_t after, std::span<const std::uint64_t> seqs, Clock::time_point now);
  void check_late(Clock::time_point now);
  void send_due(Clock::time_point now);
  void take(const DeliveryOutcome& outcome);
  void retry_host_now(const std::string& host);
  void store(Clock::time_point now, bool force);
  void write_metrics(Clock::time_point now);
  void add_disabled(std::vector<SubscriptionMetrics>& metrics);
  std::string render(const Subscription& s, const QueuedChange& change);

  const config::Config& config_;
  const std::string holder_;
  const std::string secrets_db_;
  std::unique_ptr<db::Connection> db_;
  HttpSender sender_;
  SubscriptionSet subscriptions_;
  db::FeedOrder order_;
  std::mt19937_64 random_;
  std::optional<std::uint64_t> token_;  // set while this deliverer holds the lease
  std::uint64_t scan_position_ = 0;     // the shared read's cursor
  std::uint64_t feed_end_ = 0;          // the newest seq seen
  std::uint64_t catch_up_after_ = 0;    // the subscription catch_up() looked at last
  std::shared_ptr<const domain::ReferenceData> reference_;
  Clock::time_point lease_renewed_{};
  Clock::time_point last_stored_{};  // the last store that succeeded (or had nothing to do)
  Clock::time_point reference_loaded_at_{};
  Clock::time_point next_lease_{}, next_subscriptions_{}, next_store_{}, next_cursors_{},
      next_metrics_{}, next_reference_{}, next_late_{};
  std::map<std::uint64_t, Clock::time_point> holes_;  // passed-over seqs, and since when
  bool more_ = false;
  unsigned failures_ = 0;
};

}  // namespace connector::webhooks
