#include "db/server_selector.h"

#include <utility>

namespace connector::db {

ServerSelector::ServerSelector(const std::vector<Checks>& servers,
                               std::chrono::seconds failback_after, bool probe, Now now)
    : failback_after_(failback_after), probe_(probe), now_(std::move(now)) {
  for (const auto& checks : servers) servers_.push_back({checks});
}

bool ServerSelector::breaker_open(std::size_t server) const {
  const auto* breaker = servers_[server].checks.breaker;
  return breaker != nullptr && breaker->open();
}

// Passed over by request connections: hung, or too far behind.
bool ServerSelector::skipped(std::size_t server) const {
  if (probe_) return false;
  const auto* rotation = servers_[server].checks.rotation;
  return breaker_open(server) || (rotation != nullptr && !rotation->in());
}

bool ServerSelector::failback_due() const {
  if (current_ == 0) return false;
  const auto now = now_();
  if (now - connected_at_ >= failback_after_) return true;
  for (std::size_t i = 0; i < current_; ++i) {
    if (!skipped(i) && now - servers_[i].last_failure >= failback_after_) return true;
  }
  return false;
}

bool ServerSelector::keep_current() const { return !skipped(current_) && !failback_due(); }

ServerSelector::Verdict ServerSelector::consider(std::size_t server) {
  if (skipped(server)) {
    return breaker_open(server) ? Verdict::kBreakerOpen : Verdict::kOutOfRotation;
  }
  const auto now = now_();
  if (now - servers_[server].last_failure < kReconnectPause) return Verdict::kPausing;
  attempt_started_ = now;
  return Verdict::kTry;
}

void ServerSelector::connected(std::size_t server) {
  current_ = server;
  connected_at_ = attempt_started_;
  answered();
}

void ServerSelector::connect_failed(std::size_t server, bool no_answer) {
  servers_[server].last_failure = now_();
  if (no_answer && servers_[server].checks.breaker != nullptr) {
    servers_[server].checks.breaker->record_no_answer();
  }
}

void ServerSelector::answered() {
  if (auto* breaker = servers_[current_].checks.breaker) breaker->record_answer();
}

void ServerSelector::hung() {
  servers_[current_].last_failure = now_();
  if (auto* breaker = servers_[current_].checks.breaker) breaker->record_no_answer();
}

}  // namespace connector::db
