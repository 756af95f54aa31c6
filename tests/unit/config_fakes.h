#pragma once
// What the configuration tests (test_config_*.cpp) share: a fake environment, parse and
// error_of over it, and a file that sets every key.
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "config/config.h"

namespace connector::config::fakes {

// A fake environment: a fixed map, recording every name asked for.
class FakeEnv {
 public:
  explicit FakeEnv(std::map<std::string, std::string> values = {}) : values_(std::move(values)) {}

  EnvLookup lookup() {
    return [this](const std::string& name) -> std::optional<std::string> {
      asked_.insert(name);
      const auto it = values_.find(name);
      if (it == values_.end()) return std::nullopt;
      return it->second;
    };
  }

  const std::set<std::string>& asked() const { return asked_; }

 private:
  std::map<std::string, std::string> values_;
  std::set<std::string> asked_;
};

inline Config parse(const std::string& text, std::map<std::string, std::string> env = {}) {
  FakeEnv fake(std::move(env));
  return parse_config(text, fake.lookup());
}

// The ConfigError message, or "<no error>".
inline std::string error_of(const std::string& text, std::map<std::string, std::string> env = {}) {
  try {
    parse(text, std::move(env));
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "<no error>";
}

const char* const kAllKeysFile =
    "listen = 127.0.0.1:9000\n"
    "listen_mode = 0600\n"
    "listen_backlog = 64\n"
    "fcgi_read_timeout_ms = 750\n"
    "listen_allow_any = yes\n"
    "fcgi_max_params_bytes = 8192\n"
    "threads = 3\n"
    "reference_refresh_ms = 250\n"
    "new_accounts_per_minute = 30\n"
    "events_publisher = /run/connector-events-publish/publish.sock\n"
    "events_poll_ms = 50\n"
    "events_gap_wait_ms = 500\n"
    "events_cursor_file = /var/lib/connector/events-cursor\n"
    "db_socket = /run/mysqld/mysqld.sock\n"
    "db_host = db.internal\n"
    "db_port = 3307\n"
    "db_name = bridge\n"
    "db_user = reader\n"
    "db_password = hunter2\n"
    "db_connect_timeout_s = 7\n"
    "db_read_timeout_s = 11\n"
    "processes = 5\n"
    "max_requests = 1000\n"
    "request_timeout_ms = 1500\n"
    "slow_request_ms = 200\n"
    "access_log = /var/log/connector/access.log\n"
    "shutdown_timeout_s = 9\n"
    "db_replicas = unix:/run/replica.sock, replica2:3308\n"
    "db_write_user = writer\n"
    "db_write_password = w-secret\n"
    "db_failback_s = 45\n"
    "db_replica_max_lag_s = 4\n"
    "webhooks_db_user = deliverer\n"
    "webhooks_db_password = h-secret\n"
    "webhooks_allow_hosts = 127.0.0.1,hooks.internal\n"
    "webhooks_ca_file = /etc/connector/ca.pem\n"
    "webhooks_timeout_ms = 2000\n"
    "webhooks_connect_timeout_ms = 500\n"
    "webhooks_poll_ms = 20\n"
    "webhooks_lease_ms = 4000\n"
    "webhooks_metrics_file = /var/lib/prom/connector_webhooks.prom\n";

}  // namespace connector::config::fakes
