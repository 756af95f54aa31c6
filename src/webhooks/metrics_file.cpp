#include "webhooks/metrics_file.h"

#include <sys/stat.h>

#include <cstdio>
#include <fstream>
#include <functional>
#include <stdexcept>

namespace connector::webhooks {
namespace {

struct Series {
  const char* name;
  const char* type;
  const char* help;
  std::function<std::string(const SubscriptionMetrics&)> value;
};

std::string number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3f", value);
  return text;
}

const Series kSeries[] = {
    {"connector_webhook_delivered_total", "counter", "Deliveries acknowledged with a 2xx.",
     [](const auto& m) { return std::to_string(m.delivered); }},
    {"connector_webhook_retries_total", "counter", "Delivery attempts that failed (retried).",
     [](const auto& m) { return std::to_string(m.retried); }},
    {"connector_webhook_failing", "gauge",
     "1 while the oldest undelivered change has failed for 24 h.",
     [](const auto& m) { return std::string(m.failing ? "1" : "0"); }},
    {"connector_webhook_lag_changes", "gauge", "Change feed positions after the cursor.",
     [](const auto& m) { return std::to_string(m.lag_changes); }},
    {"connector_webhook_lag_seconds", "gauge", "Age of the oldest unacknowledged change.",
     [](const auto& m) { return number(m.lag_seconds); }},
    {"connector_webhook_lost_before_seq", "gauge",
     "Above 0: changes up to this seq were trimmed from the feed before delivery.",
     [](const auto& m) { return std::to_string(m.lost_before_seq); }},
};

}  // namespace

std::string metrics_text(bool holding, const std::vector<SubscriptionMetrics>& subscriptions) {
  std::string out =
      "# HELP connector_webhook_deliverer_holding 1 on the node whose deliverer holds the "
      "fleet's lease.\n# TYPE connector_webhook_deliverer_holding gauge\n"
      "connector_webhook_deliverer_holding ";
  out += holding ? "1\n" : "0\n";
  if (subscriptions.empty()) return out;
  for (const auto& series : kSeries) {
    out += std::string("# HELP ") + series.name + " " + series.help + "\n# TYPE " + series.name +
           " " + series.type + "\n";
    for (const auto& m : subscriptions) {
      out += std::string(series.name) + "{subscription=\"" + std::to_string(m.id) + "\"} " +
             series.value(m) + "\n";
    }
  }
  return out;
}

void write_metrics_file(const std::string& path, const std::string& text) {
  const std::string temporary = path + ".tmp";
  {
    std::ofstream file(temporary, std::ios::binary | std::ios::trunc);
    file << text;
    if (!file.flush()) {
      file.close();
      std::remove(temporary.c_str());
      throw std::runtime_error("cannot write " + temporary);
    }
  }
  // Readable by node_exporter's user whatever the service's umask (no secret is in it).
  ::chmod(temporary.c_str(), 0644);
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    std::remove(temporary.c_str());
    throw std::runtime_error("cannot rename " + temporary + " to " + path);
  }
}

}  // namespace connector::webhooks
