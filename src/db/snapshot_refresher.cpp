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
                                     SupplyCache& supply, CircuitBreakers& breakers)
    : config_(config), reference_(reference), supply_(supply), breakers_(breakers) {}

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
  return failures == 1 ? std::chrono::milliseconds(250) : std::chrono::milliseconds(500);
}

bool SnapshotRefresher::load_all(Database& db, unsigned failures_so_far) {
  try {
    reference_.load(db);
    supply_.load(db);
    if (failures_so_far > 0) util::log_warning("the snapshots are loaded again");
    return true;
  } catch (const std::exception& e) {
    // The first failure, then one line a minute or so while they go on.
    if (failures_so_far % 120 == 0) {
      util::log_warning(std::string("reloading the snapshots failed, serving the previous ones: ") +
                        e.what());
    }
    return false;
  }
}

void SnapshotRefresher::run() {
  DriverThreadScope driver_thread;
  const unsigned budget_ms = config_.worker.request_timeout_ms;
  // The probe: it ignores open breakers, and its answers close them.
  Database db(breakers_.attach(read_targets(config_.db)), connection_options(config_.db, budget_ms),
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
    failures = load_all(db, failures) ? 0 : failures + 1;
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
