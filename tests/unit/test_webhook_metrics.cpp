// The deliverer's metrics file (webhooks/metrics_file.h): its text, and how it is written.
#define BOOST_TEST_MODULE webhook_metrics
#include <stdlib.h>  // mkdtemp

#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "webhooks/metrics_file.h"

using namespace connector::webhooks;
namespace fs = std::filesystem;

namespace {

const std::string kHolding =
    "# HELP connector_webhook_deliverer_holding 1 on the node whose deliverer holds the fleet's "
    "lease.\n"
    "# TYPE connector_webhook_deliverer_holding gauge\n";

// A directory of its own, removed at the end.
struct TempDir {
  fs::path path;
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "webhook-metrics-XXXXXX").string();
    BOOST_REQUIRE(mkdtemp(pattern.data()) != nullptr);
    path = pattern;
  }
  ~TempDir() { fs::remove_all(path); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
};

std::string read(const fs::path& path) {
  std::ifstream file(path, std::ios::binary);
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

std::vector<std::string> names_in(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir))
    names.push_back(entry.path().filename().string());
  return names;
}

std::string thrown_by(const std::string& path, const std::string& text) {
  try {
    write_metrics_file(path, text);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "nothing thrown";
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_node_not_holding_with_no_subscriptions_writes_only_that) {
  BOOST_TEST(metrics_text(false, {}) == kHolding + "connector_webhook_deliverer_holding 0\n");
  BOOST_TEST(metrics_text(true, {}) == kHolding + "connector_webhook_deliverer_holding 1\n");
}

BOOST_AUTO_TEST_CASE(the_holder_writes_six_series_per_subscription) {
  const std::vector<SubscriptionMetrics> subscriptions = {
      {.id = 3,
       .delivered = 120,
       .retried = 4,
       .failing = false,
       .lag_changes = 0,
       .lag_seconds = 0,
       .lost_before_seq = 0},
      {.id = 17,
       .delivered = 0,
       .retried = 18'446'744'073'709'551'615ULL,
       .failing = true,
       .lag_changes = 52,
       .lag_seconds = 86'461.25,
       .lost_before_seq = 9001},
  };
  BOOST_TEST(metrics_text(true, subscriptions) ==
             kHolding +
                 "connector_webhook_deliverer_holding 1\n"
                 "# HELP connector_webhook_delivered_total Deliveries acknowledged with a 2xx.\n"
                 "# TYPE connector_webhook_delivered_total counter\n"
                 "connector_webhook_delivered_total{subscription=\"3\"} 120\n"
                 "connector_webhook_delivered_total{subscription=\"17\"} 0\n"
                 "# HELP connector_webhook_retries_total Delivery attempts that failed "
                 "(retried).\n"
                 "# TYPE connector_webhook_retries_total counter\n"
                 "connector_webhook_retries_total{subscription=\"3\"} 4\n"
                 "connector_webhook_retries_total{subscription=\"17\"} 18446744073709551615\n"
                 "# HELP connector_webhook_failing 1 while the oldest undelivered change has "
                 "failed for 24 h.\n"
                 "# TYPE connector_webhook_failing gauge\n"
                 "connector_webhook_failing{subscription=\"3\"} 0\n"
                 "connector_webhook_failing{subscription=\"17\"} 1\n"
                 "# HELP connector_webhook_lag_changes Change feed positions after the cursor.\n"
                 "# TYPE connector_webhook_lag_changes gauge\n"
                 "connector_webhook_lag_changes{subscription=\"3\"} 0\n"
                 "connector_webhook_lag_changes{subscription=\"17\"} 52\n"
                 "# HELP connector_webhook_lag_seconds Age of the oldest unacknowledged change.\n"
                 "# TYPE connector_webhook_lag_seconds gauge\n"
                 "connector_webhook_lag_seconds{subscription=\"3\"} 0.000\n"
                 "connector_webhook_lag_seconds{subscription=\"17\"} 86461.250\n"
                 "# HELP connector_webhook_lost_before_seq Above 0: changes up to this seq were "
                 "trimmed from the feed before delivery.\n"
                 "# TYPE connector_webhook_lost_before_seq gauge\n"
                 "connector_webhook_lost_before_seq{subscription=\"3\"} 0\n"
                 "connector_webhook_lost_before_seq{subscription=\"17\"} 9001\n");
}

BOOST_AUTO_TEST_CASE(a_node_not_holding_writes_the_subscriptions_it_is_given) {
  // Whether it holds is one gauge; the series follow what the caller passes.
  const std::string text = metrics_text(false, {{.id = 1}});
  BOOST_TEST(text.find("connector_webhook_deliverer_holding 0\n") != std::string::npos);
  BOOST_TEST(text.find("connector_webhook_lag_seconds{subscription=\"1\"} 0.000\n") !=
             std::string::npos);
}

BOOST_AUTO_TEST_CASE(the_file_is_written_whole_then_renamed_over_the_old_one) {
  const TempDir dir;
  const fs::path file = dir.path / "connector_webhooks.prom";
  write_metrics_file(file.string(), "first\n");
  BOOST_TEST(read(file) == "first\n");
  BOOST_TEST(names_in(dir.path) == std::vector<std::string>{"connector_webhooks.prom"});
  const std::string text = metrics_text(true, {{.id = 2, .delivered = 5}});
  write_metrics_file(file.string(), text);
  BOOST_TEST(read(file) == text);
  BOOST_TEST(names_in(dir.path) == std::vector<std::string>{"connector_webhooks.prom"});
}

BOOST_AUTO_TEST_CASE(a_file_that_cannot_be_written_throws_naming_it) {
  const TempDir dir;
  // A directory that is not there (the tests may run as root, who writes in any directory).
  const std::string missing = (dir.path / "missing" / "connector_webhooks.prom").string();
  BOOST_TEST(thrown_by(missing, "x\n") == "cannot write " + missing + ".tmp");
  BOOST_TEST(!fs::exists(dir.path / "missing"));
  // A directory in the file's place: written, but not renamed over it.
  const fs::path taken = dir.path / "taken.prom";
  fs::create_directory(taken);
  BOOST_TEST(thrown_by(taken.string(), "x\n") ==
             "cannot rename " + taken.string() + ".tmp to " + taken.string());
  BOOST_TEST(fs::is_directory(taken));
}
