#include "db/refresher.h"

#include <unistd.h>

#include <algorithm>
#include <random>

#include "util/clock.h"
#include "util/log.h"

namespace connector::db {
namespace {

// A load whose statements began at as_of and whose value was stored at stored_at.
void record_load(metrics::RefreshedLoad& load, std::int64_t as_of_unix_ms,
                 std::chrono::steady_clock::time_point stored_at) {
  using std::chrono::duration_cast;
  const auto since_stored = std::chrono::steady_clock::now() - stored_at;
  load.as_of_unix_ms.store(as_of_unix_ms);
  load.loaded_unix_ms.store(util::unix_ms_now() -
                            duration_cast<std::chrono::milliseconds>(since_stored).count());
  load.loaded_monotonic_ns.store(
      duration_cast<std::chrono::nanoseconds>(stored_at.time_since_epoch()).count());
}

}  // namespace

std::chrono::milliseconds refresh_interval(const config::Config& config) {
  return std::chrono::milliseconds(std::max(config.worker.reference_refresh_ms, 50u));
}

Refresher::Refresher(const config::Config& config, RefreshedReference& reference,
                     RefreshedSupply& supply, CircuitBreakers& breakers,
                     metrics::RefreshedLoads& loads)
    : config_(config), reference_(reference), supply_(supply), breakers_(breakers), loads_(loads) {}

std::chrono::milliseconds Refresher::next_wait(std::chrono::milliseconds interval,
                                               unsigned failures, double jitter) {
  if (failures == 0) {
    return std::chrono::milliseconds(
        static_cast<std::int64_t>(static_cast<double>(interval.count()) * (1.0 + jitter)));
  }
  const auto backoff =
      failures == 1 ? std::chrono::milliseconds(250) : std::chrono::milliseconds(500);
  return std::min(backoff, interval);
}

void Refresher::start() {
  // The thread's name and the log lines below still say "snapshots", the word these copies
  // had before it meant only the database's consistent read: top -H, scripts/profile, the
  // benchmarks' records and operators' log searches know them by it.
  loop_.start<DriverThreadScope>(
      "snapshots", [this, random = std::minstd_rand(static_cast<unsigned>(::getpid())),
                    jitter = std::uniform_real_distribution<double>(-0.1, 0.1)]() mutable {
        failures_ = load_all() ? 0 : failures_ + 1;
        return next_wait(refresh_interval(config_), failures_, jitter(random));
      });
}

bool Refresher::load_all() {
  if (!db_) {
    db_ = std::make_unique<Connection>(
        breakers_.attach(read_targets(config_.db)),
        connection_options(config_.db, config_.worker.request_timeout_ms));
  }
  db_->set_deadline(util::deadline_from_now(config_.worker.request_budget()));
  try {
    const std::int64_t as_of = util::unix_ms_now();
    record_load(loads_.reference, as_of, reference_.load(*db_));
    record_load(loads_.supply, as_of, supply_.load(*db_));
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
