#pragma once
// A value loaded from the database and shared by the threads of a worker process, reloaded when
// older than a refresh interval: the reference data (chains, assets, connects, pairs) and the
// chains' status and supply. One thread reloads while the others keep serving the previous
// value; a failed reload keeps serving it until it is older than max_age, then the failure
// (DatabaseUnavailable: a 503) reaches the callers, each of which tries again.
#include <chrono>
#include <memory>
#include <mutex>
#include <string>

#include "util/log.h"

namespace connector::db {

template <typename T>
class Snapshot {
 public:
  using Clock = std::chrono::steady_clock;
  using Now = Clock::time_point (*)();

  // max_age: how long a value may be served when reloads fail (duration::max(): for ever).
  // now: the clock, for tests.
  Snapshot(std::string name, Clock::duration refresh_interval,
           Clock::duration max_age = Clock::duration::max(), Now now = &Clock::now)
      : name_(std::move(name)), refresh_interval_(refresh_interval), max_age_(max_age), now_(now) {}

  // The current value; load() (returning T) is called when it is due for a reload.
  template <typename Load>
  std::shared_ptr<const T> get(Load&& load) {
    {
      std::lock_guard lock(mutex_);
      const auto now = now_();
      if (value_ && (now < retry_at_ || loading_) && servable(now)) return value_;
      loading_ = true;
    }
    try {
      return store(load());
    } catch (const std::exception& e) {
      std::lock_guard lock(mutex_);
      const auto now = now_();
      loading_ = false;
      retry_at_ = now + refresh_interval_;  // not on every request while the database is away
      if (!value_ || !servable(now)) throw;
      util::log_warning("reloading the " + name_ +
                        " failed, serving the previous one: " + e.what());
      return value_;
    }
  }

  // Reloads now, whatever the value's age (data newer than it was seen).
  template <typename Load>
  std::shared_ptr<const T> refresh(Load&& load) {
    return store(load());
  }

 private:
  bool servable(Clock::time_point now) const {
    return max_age_ == Clock::duration::max() || now - loaded_at_ < max_age_;
  }

  std::shared_ptr<const T> store(T loaded) {
    auto value = std::make_shared<const T>(std::move(loaded));
    std::lock_guard lock(mutex_);
    value_ = value;
    loaded_at_ = now_();
    retry_at_ = loaded_at_ + refresh_interval_;
    loading_ = false;
    return value;
  }

  const std::string name_;
  const Clock::duration refresh_interval_;
  const Clock::duration max_age_;
  const Now now_;
  std::mutex mutex_;
  std::shared_ptr<const T> value_;
  Clock::time_point loaded_at_{};
  Clock::time_point retry_at_{};  // the next reload: refresh_interval_ after a load or a failure
  bool loading_ = false;
};

}  // namespace connector::db
