#include "db/targets.h"

namespace connector::db {

std::vector<DatabaseTarget> CircuitBreakers::attach(std::vector<DatabaseTarget> targets) {
  std::lock_guard lock(mutex_);
  for (auto& target : targets) {
    auto& entry = by_server_[target.endpoint.describe()];
    if (!entry.breaker) {
      entry = {target, std::make_unique<CircuitBreaker>(open_count_), std::make_unique<Rotation>()};
    }
    target.breaker = entry.breaker.get();
    target.rotation = entry.rotation.get();
  }
  return targets;
}

std::vector<DatabaseTarget> CircuitBreakers::open_servers() {
  std::lock_guard lock(mutex_);
  std::vector<DatabaseTarget> open;
  for (auto& [name, entry] : by_server_) {
    if (!entry.breaker->open()) continue;
    open.push_back(entry.target);
    open.back().breaker = entry.breaker.get();
    open.back().rotation = entry.rotation.get();
  }
  return open;
}

std::vector<DatabaseTarget> read_targets(const config::DatabaseSettings& s) {
  std::vector<DatabaseTarget> targets;
  for (const auto& replica : s.replicas) targets.push_back({replica, s.user, s.password, nullptr});
  targets.push_back({s.primary(), s.user, s.password, nullptr});
  return targets;
}

std::vector<std::string> read_server_addresses(const config::DatabaseSettings& s) {
  std::vector<std::string> addresses;
  for (const auto& target : read_targets(s)) addresses.push_back(target.endpoint.describe());
  return addresses;
}

std::vector<DatabaseTarget> write_targets(const config::DatabaseSettings& s) {
  if (s.write_user.empty()) return {{s.primary(), s.user, s.password, nullptr}};
  return {{s.primary(), s.write_user, s.write_password, nullptr}};
}

ConnectionOptions connection_options(const config::DatabaseSettings& s,
                                     unsigned statement_timeout_ms) {
  return {s.name, s.connect_timeout_s, s.read_timeout_s, statement_timeout_ms, s.failback_s};
}

}  // namespace connector::db
