#include "webhooks/deliverer.h"

#include <algorithm>
#include <stdexcept>
#include <utility>
#include <vector>

#include "db/change_feed.h"
#include "db/refreshed_reference.h"
#include "db/targets.h"
#include "db/webhook_store.h"
#include "util/clock.h"
#include "util/log.h"
#include "webhooks/delivery_body.h"
#include "webhooks/receiver_url.h"
#include "webhooks/signature.h"

namespace connector::webhooks {

using std::chrono::milliseconds;

Deliverer::Deliverer(const config::Config& config, std::string holder)
    : config_(config),
      holder_(std::move(holder)),
      secrets_db_(db::secrets_database(config.db.name)),
      sender_(SenderSettings{.ca_file = config.webhooks.ca_file,
                             .timeout = milliseconds(config.webhooks.timeout_ms),
                             .connect_timeout = milliseconds(config.webhooks.connect_timeout_ms)}),
      subscriptions_(allowed_hosts(config.webhooks.allow_hosts)),
      order_(milliseconds(config.worker.events_gap_wait_ms)),
      random_(std::random_device{}()) {}

Deliverer::~Deliverer() = default;

void Deliverer::run(const std::atomic<bool>& stop) {
  util::log_info("the webhook deliverer starts as \"" + holder_ + "\"");
  // The database every webhooks_poll_ms (at once while the feed has more); sending and
  // outcomes in between, as transfers end.
  Clock::time_point next_round{};
  while (!stop.load()) {
    auto now = Clock::now();
    if (now >= next_round || more_) {
      next_round = now + milliseconds(config_.webhooks.poll_ms);
      try {
        // Recovered only once the database answered again (most rounds of a deliverer that
        // does not hold the lease do not ask it).
        if (round(now) && failures_ > 0) {
          util::log_info("the webhook deliverer runs again");
          failures_ = 0;
        }
      } catch (const std::exception& e) {
        more_ = false;
        // The first failure, then one line a minute or so while they go on.
        if (failures_++ % 600 == 0) {
          util::log_warning(std::string("the webhook deliverer waits: ") + e.what());
        }
      }
      now = Clock::now();
    }
    if (token_ && sending_allowed(now)) {
      send_due(now);
    } else {
      cancel_in_flight();  // past half the lease another node may start: never two senders
    }
    const auto wait =
        more_ ? milliseconds(0)
              : std::chrono::ceil<milliseconds>(std::max(next_round - now, Clock::duration(0)));
    for (const auto& outcome : sender_.run(wait)) take(outcome);
  }
  // Deliveries in flight get a moment to end, so their acknowledgements are stored.
  const auto until = Clock::now() + std::chrono::seconds(2);
  while (sender_.in_flight() > 0 && Clock::now() < until) {
    for (const auto& outcome : sender_.run(milliseconds(50))) take(outcome);
  }
  try {
    if (token_) {
      db_->set_deadline(util::deadline_from_now(config_.worker.request_budget()));
      store(Clock::now(), /*force=*/true);
      db::release_webhook_lease(*db_, holder_);
      util::log_info("the webhook deliverer stops and frees the lease");
    }
  } catch (const std::exception& e) {
    util::log_warning(std::string("the webhook deliverer stops without freeing the lease (it "
                                  "expires by itself): ") +
                      e.what());
  }
  stop_holding();
  write_metrics(Clock::now());  // holding 0: this node no longer delivers
}

bool Deliverer::round(Clock::time_point now) {
  if (!db_) {
    auto options = db::connection_options(config_.db);
    db_ = std::make_unique<db::Connection>(
        std::vector<db::DatabaseTarget>{
            {config_.db.primary(), config_.webhooks.db_user, config_.webhooks.db_password}},
        options);
  }
  db_->set_deadline(util::deadline_from_now(config_.worker.request_budget()));
  if (now >= next_metrics_) write_metrics(now);
  const bool lease_due = now >= next_lease_;
  if (lease_due) renew_lease(now);
  if (!token_ || !lease_fresh(now)) return lease_due;
  if (now >= next_reference_) reload_reference();
  if (now >= next_subscriptions_) reload_subscriptions();
  more_ = read_feed();
  catch_up();
  if (now >= next_late_) check_late(now);
  store(now, /*force=*/false);
  return true;
}

void Deliverer::renew_lease(Clock::time_point now) {
  next_lease_ = now + kLeaseEvery;
  const auto token = db::claim_webhook_lease(*db_, holder_, config_.webhooks.lease_ms);
  if (!token) {
    if (token_) {
      util::log_warning("the webhook deliverer lost the lease to another node");
      stop_holding();
    }
    return;
  }
  lease_renewed_ = now;
  if (token_ != token) {
    token_ = token;
    try {
      become_holder();
    } catch (...) {
      stop_holding();  // taken up again from the start at the next renewal
      throw;
    }
  }
}

// Half the lease: a holder cut off from the primary stops sending, and drops what it has in
// flight, well before another node may take over (after the whole lease, on the primary's
// clock). So does one whose stores keep failing: what it sends is not remembered.
bool Deliverer::lease_fresh(Clock::time_point now) const {
  return now - lease_renewed_ < milliseconds(config_.webhooks.lease_ms / 2);
}

bool Deliverer::sending_allowed(Clock::time_point now) const {
  return lease_fresh(now) && now - last_stored_ < milliseconds(config_.webhooks.lease_ms / 2);
}

void Deliverer::cancel_in_flight() {
  if (sender_.in_flight() == 0) return;
  for (auto& [id, s] : subscriptions_.all()) {
    if (!sender_.busy(id)) continue;
    sender_.cancel(id);
    s.queue.cancel_in_flight();
  }
}

void Deliverer::become_holder() {
  util::log_info("the webhook deliverer delivers for the fleet (lease token " +
                 std::to_string(*token_) + ")");
  last_stored_ = Clock::now();
  for (const auto& [id, s] : subscriptions_.all()) sender_.cancel(id);
  subscriptions_.clear();
  order_ = db::FeedOrder(milliseconds(config_.worker.events_gap_wait_ms));
  reload_reference();
  reload_subscriptions();
  feed_end_ = db::feed_end(*db_);
  scan_position_ = feed_end_;
  for (const auto& [id, s] : subscriptions_.all()) {
    scan_position_ = std::min(scan_position_, s.queue.known_upto());
  }
}

void Deliverer::stop_holding() {
  for (const auto& [id, s] : subscriptions_.all()) sender_.cancel(id);
  subscriptions_.clear();
  token_.reset();
}

void Deliverer::reload_subscriptions() {
  next_subscriptions_ = Clock::now() + kSubscriptionsEvery;
  const auto rows = db::enabled_webhooks(*db_, secrets_db_);
  const auto dropped =
      subscriptions_.sync(rows, [&](std::uint64_t id) { return db::webhook_addresses(*db_, id); });
  for (const std::uint64_t id : dropped) sender_.cancel(id);
}

void Deliverer::reload_reference() {
  // The times move only once it loaded: a load that failed is tried again next round.
  reference_ = std::make_shared<const domain::ReferenceData>(db::load_reference_data(*db_));
  reference_loaded_at_ = Clock::now();
  next_reference_ = reference_loaded_at_ + kReferenceEvery;
}

void Deliverer::send_due(Clock::time_point now) {
  for (auto& [id, s] : subscriptions_.all()) {
    const QueuedChange* change = s.queue.due(now);
    if (change == nullptr) continue;
    s.queue.sending();
    try {
      const std::string body = render(s, *change);
      const std::int64_t timestamp = util::unix_ms_now() / 1000;
      sender_.start(
          Delivery{.subscription = id,
                   .url = s.url,
                   .allow_listed = s.allow_listed,
                   .headers = {"Content-Type: application/json",
                               "Connector-Event-Id: " + event_id(id, change->seq),
                               "Connector-Timestamp: " + std::to_string(timestamp),
                               "Connector-Signature: " + signature_v1(s.secret, timestamp, body)},
                   .body = body});
    } catch (const std::exception& e) {
      // Not sent (the record cannot be rendered yet, libcurl out of memory): a failed attempt,
      // tried again on the retry schedule like any other.
      util::log_warning("webhook subscription=" + std::to_string(id) +
                        " event=" + event_id(id, change->seq) + " not sent: " + e.what());
      take({.subscription = id, .acknowledged = false, .status = "not-sent"});
    }
  }
}

std::string Deliverer::render(const Subscription& s, const QueuedChange& change) {
  if (!reference_) throw std::runtime_error("no reference data loaded yet");
  // A record newer than the reference data (its asset imported a moment ago): loaded again,
  // at most once a second.
  if (!reference_->covers(change.record) &&
      Clock::now() - reference_loaded_at_ > std::chrono::seconds(1)) {
    reload_reference();
  }
  return delivery_body(change.record, change.seq, s.id, s.queue.attempt(), *reference_);
}

void Deliverer::take(const DeliveryOutcome& outcome) {
  Subscription* s = subscriptions_.find(outcome.subscription);
  if (s == nullptr || !s->queue.in_flight() || s->queue.oldest() == nullptr) return;
  const std::uint64_t seq = s->queue.oldest()->seq;
  util::log_info("webhook subscription=" + std::to_string(s->id) + " event=" +
                 event_id(s->id, seq) + " attempt=" + std::to_string(s->queue.attempt()) +
                 " status=" + outcome.status + " ms=" + std::to_string(outcome.took.count()));
  const std::int64_t now_us = util::unix_us_now();
  if (outcome.acknowledged) {
    const bool was_failing = s->queue.attempt() > 1;
    s->queue.acknowledged();
    ++s->delivered_unstored;
    if (was_failing) retry_host_now(s->host);
  } else {
    std::uniform_real_distribution<double> uniform(0.0, 1.0);
    s->queue.failed(Clock::now(), now_us, uniform(random_));
    ++s->retried_unstored;
  }
  s->last_status = outcome.status;
  s->last_attempt_us = now_us;
  s->dirty = true;
}

// A receiver's host that answers again after failures (back from an outage): the other
// subscriptions to it, waiting for their retries, are tried now rather than at the end of waits
// that have grown to an hour, each still one request at a time.
void Deliverer::retry_host_now(const std::string& host) {
  for (auto& [id, s] : subscriptions_.all()) {
    if (s.host == host && s.queue.next_attempt_at()) s.queue.retry_now();
  }
}

// Attempts are stored every kStoreEvery; a cursor that only moved past changes nobody follows,
// every kCursorsEvery (it holds the feed's trim back).
void Deliverer::store(Clock::time_point now, bool force) {
  if (!token_ || (!force && now < next_store_)) return;
  next_store_ = now + kStoreEvery;
  const bool cursors_too = force || now >= next_cursors_;
  if (cursors_too) next_cursors_ = now + kCursorsEvery;
  std::vector<db::WebhookQueueWrite> writes;
  for (const auto& [id, s] : subscriptions_.all()) {
    const auto state = s.queue.stored();
    if (!s.dirty && !(cursors_too && state.acked_seq != s.stored_acked)) continue;
    writes.push_back({.subscription = id,
                      .acked_seq = state.acked_seq,
                      .attempt = state.attempt,
                      .retrying_since_us = state.retrying_since_us.value_or(0),
                      .failing_since_us = state.failing_since_us.value_or(0),
                      .delivered = s.delivered_unstored,
                      .retried = s.retried_unstored,
                      .last_status = s.last_status,
                      .last_attempt_us = s.last_attempt_us,
                      .replay_applied = s.replay_applied});
  }
  if (writes.empty()) {
    last_stored_ = now;
    return;
  }
  if (!db::store_webhook_queues(*db_, holder_, *token_, writes)) {
    util::log_warning(
        "the webhook deliverer lost the lease to another node (its cursors were "
        "not stored; that node delivers from its own)");
    stop_holding();
    return;
  }
  last_stored_ = now;
  for (const auto& w : writes) {
    Subscription& s = *subscriptions_.find(w.subscription);
    s.delivered += s.delivered_unstored;
    s.retried += s.retried_unstored;
    s.delivered_unstored = s.retried_unstored = 0;
    s.stored_acked = w.acked_seq;
    s.replay_applied = 0;
    s.dirty = false;
  }
}

}  // namespace connector::webhooks
