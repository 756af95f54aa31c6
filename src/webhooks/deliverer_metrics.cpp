// The Deliverer's metrics file (webhooks/metrics_file.h): every node's holding flag, and the
// holder's figures per subscription, disabled ones included.
#include <algorithm>
#include <exception>
#include <string>
#include <vector>

#include "db/webhook_store.h"
#include "util/clock.h"
#include "util/log.h"
#include "util/log_throttle.h"
#include "webhooks/deliverer.h"
#include "webhooks/metrics_file.h"

namespace connector::webhooks {
namespace {

// A metrics file that cannot be written (a directory missing): one line a minute, not one every
// kMetricsEvery.
util::LogThrottle metrics_lines(std::chrono::seconds(60));

}  // namespace

// The disabled subscriptions too, as stored, from the holder: a disabled one's loss mark
// (its changes trimmed while it held nothing) must reach the alert.
void Deliverer::add_disabled(std::vector<SubscriptionMetrics>& metrics) {
  try {
    for (const auto& row : db::disabled_webhooks(*db_)) {
      metrics.push_back({.id = row.id,
                         .delivered = row.delivered,
                         .retried = row.retried,
                         .lag_changes = feed_end_ > row.acked_seq ? feed_end_ - row.acked_seq : 0,
                         .lost_before_seq = row.lost_before_seq});
    }
  } catch (const std::exception&) {
    // The primary unavailable: this file shows the enabled ones; the round says why.
  }
}

void Deliverer::write_metrics(Clock::time_point now) {
  next_metrics_ = now + kMetricsEvery;
  if (config_.webhooks.metrics_file.empty()) return;
  std::vector<SubscriptionMetrics> metrics;
  const std::int64_t now_us = util::unix_us_now();
  for (const auto& [id, s] : subscriptions_.all()) {
    const auto oldest = s.queue.oldest_changed_us();
    metrics.push_back(
        {.id = id,
         .delivered = s.delivered + s.delivered_unstored,
         .retried = s.retried + s.retried_unstored,
         .failing = s.queue.failing(),
         .lag_changes = feed_end_ > s.queue.acked_seq() ? feed_end_ - s.queue.acked_seq() : 0,
         .lag_seconds = oldest ? static_cast<double>(now_us - *oldest) / 1e6 : 0.0,
         .lost_before_seq = s.lost_before_seq});
  }
  if (token_) add_disabled(metrics);
  std::sort(metrics.begin(), metrics.end(),
            [](const auto& a, const auto& b) { return a.id < b.id; });
  try {
    write_metrics_file(config_.webhooks.metrics_file, metrics_text(token_.has_value(), metrics));
  } catch (const std::exception& e) {
    if (metrics_lines.due()) {
      util::log_warning(std::string("the webhook deliverer cannot write its metrics: ") + e.what());
    }
  }
}

}  // namespace connector::webhooks
