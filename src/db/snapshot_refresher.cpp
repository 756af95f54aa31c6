#include "db/snapshot_refresher.h"

#include <unistd.h>

#include <algorithm>
#include <random>

#include "util/log.h"

namespace connector::db {

std::chrono::milliseconds refresh_interval(const config::Config& config) {
  return std::chrono::milliseconds(std::max(config.worker.reference_refresh_ms, 50u));
}

Database::Clock::time_point deadline_from_now(const config::Config& config) {
  return Database::Clock::now() + std::chrono::milliseconds(config.worker.request_timeout_ms);
}

SnapshotRefresher::SnapshotRefresher(const config::Config& config, ReferenceCache& reference,
                                     SupplyCache& supply, CircuitBreakers& breakers)
    : config_(config), reference_(reference), supply_(supply), breakers_(breakers) {}

std::chrono::milliseconds SnapshotRefresher::next_wait(std::chrono::milliseconds interval,
                                                       unsigned failures, double jitter) {
  if (failures == 0) {
    return std::chrono::milliseconds(
        static_cast<std::int64_t>(static_cast<double>(interval.count()) * (1.0 + jitter)));
  }
  const auto backoff =
      failures == 1 ? std::chrono::milliseconds(250) : std::chrono::milliseconds(500);
  return std::min(backoff, interval);
}

void SnapshotRefresher::start() {
  loop_.start([this, random = std::minstd_rand(static_cast<unsigned>(::getpid())),
               jitter = std::uniform_real_distribution<double>(-0.1, 0.1)]() mutable {
    failures_ = load_all() ? 0 : failures_ + 1;
    return next_wait(refresh_interval(config_), failures_, jitter(random));
  });
}

bool SnapshotRefresher::load_all() {
  if (!db_) {
    db_ = std::make_unique<Database>(
        breakers_.attach(read_targets(config_.db)),
        connection_options(config_.db, config_.worker.request_timeout_ms));
  }
  db_->set_deadline(deadline_from_now(config_));
  try {
    reference_.load(*db_);
    supply_.load(*db_);
    if (failures_ > 0) util::log_warning("the snapshots are loaded again");
    return true;
  } catch (const std::exception& e) {
    // The first failure, then one line in every 120 while they go on.
    if (failures_ % 120 == 0) {
      util::log_warning(std::string("reloading the snapshots failed, serving the previous ones: ") +
                        e.what());
    }
    return false;
  }
}

}  // namespace connector::db
