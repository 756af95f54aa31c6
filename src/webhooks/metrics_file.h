#pragma once
// The deliverer's metrics, in Prometheus' text format, for node_exporter's textfile collector
// (webhooks_metrics_file; docs/webhooks.md lists them and monitoring/connector.rules.yml alerts
// on them). Every node writes whether it delivers; the holder also writes one series per
// subscription. Never a secret or a URL: subscriptions are named by id.
#include <cstdint>
#include <string>
#include <vector>

namespace connector::webhooks {

struct SubscriptionMetrics {
  std::uint64_t id = 0;
  std::uint64_t delivered = 0;
  std::uint64_t retried = 0;
  bool failing = false;
  std::uint64_t lag_changes = 0;  // feed positions after its cursor
  double lag_seconds = 0;         // age of its oldest unacknowledged change
  std::uint64_t lost_before_seq = 0;
};

std::string metrics_text(bool holding, const std::vector<SubscriptionMetrics>& subscriptions);

// Writes it whole or not at all (a temporary file renamed over the old one), so the collector
// never reads half a file; mode 0644. Throws std::runtime_error naming the file.
void write_metrics_file(const std::string& path, const std::string& text);

}  // namespace connector::webhooks
