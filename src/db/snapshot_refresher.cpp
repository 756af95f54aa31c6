#include "db/snapshot_refresher.h"

#include <unistd.h>

#include <algorithm>
#include <random>

#include "util/log.h"

namespace connector::db {
std::chrono::milliseconds refresh_interval(const config::Config& config) {
  return std::chrono::milliseconds(std::max(config.worker.reference_refresh_ms, 50u));
}

SnapshotRefresher::SnapshotRefresher(const config::Config& config, ReferenceCache& reference,
                                     SupplyCache& supply, CircuitBreaker& breaker)
    : config_(config), reference_(reference), supply_(supply), breaker_(breaker) {}

SnapshotRefresher::~SnapshotRefresher() { stop(); }

void SnapshotRefresher::start() {
  thread_ = std::thread([this] { run(); });
  std::unique_lock lock(mutex_);
  wake_.wait(lock, [this] { return first_load_done_ || stopping_; });
}

void SnapshotRefresher::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

std::chrono::milliseconds SnapshotRefresher::next_wait(std::chrono::milliseconds interval,
                                                       unsigned failures, double jitter) {
  if (failures == 0) {
    return std::chrono::milliseconds(
        static_cast<std::int64_t>(static_cast<double>(interval.count()) * (1.0 + jitter)));
  }
  const auto backoff = std::chrono::milliseconds(250) * (1 << std::min(failures - 1, 8u));
  return std::min(backoff, std::max(interval, std::chrono::milliseconds(250)));
}

bool SnapshotRefresher::load_all(Database& db) {
  try {
    reference_.load(db);
    supply_.load(db);
    return true;
  } catch (const std::exception& e) {
    util::log_warning(std::string("reloading the snapshots failed, serving the previous ones: ") +
                      e.what());
    return false;
  }
}

void SnapshotRefresher::run() {
  DriverThreadScope driver_thread;
  const unsigned budget_ms = config_.worker.request_timeout_ms;
  // The probe: it ignores an open breaker, and its answers close it.
  Database db(read_targets(config_.db), connection_options(config_.db, budget_ms), &breaker_,
              /*probe=*/true);
  const auto interval = refresh_interval(config_);
  std::minstd_rand random(static_cast<unsigned>(::getpid()));
  std::uniform_real_distribution<double> jitter(-0.1, 0.1);
  unsigned failures = 0;
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    lock.unlock();
    db.set_deadline(budget_ms == 0 ? Database::Clock::time_point::max()
                                   : Database::Clock::now() + std::chrono::milliseconds(budget_ms));
    failures = load_all(db) ? 0 : failures + 1;
    lock.lock();
    if (!first_load_done_) {
      first_load_done_ = true;
      wake_.notify_all();
    }
    wake_.wait_for(lock, next_wait(interval, failures, jitter(random)),
                   [this] { return stopping_; });
  }
}

}  // namespace connector::db
