#pragma once
// A refreshed copy: a value loaded from the database, shared read-only by the threads of a
// worker process and replaced whole on an interval: the reference data (chains, assets,
// connects, pairs) and the chains' status and supply. Only the process's refresher
// (db/refresher.h) stores into it, on its own thread; request threads only read it, so an
// answer served from memory never waits on the database. Not a cache (nothing is loaded on a
// miss, nothing is evicted) and not a snapshot (that word is the database's consistent read).
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>

#include "db/connection.h"

namespace connector::db {

template <typename T>
class Refreshed {
 public:
  using Clock = std::chrono::steady_clock;
  using Now = Clock::time_point (*)();

  // max_age: how long a value may be served after it was loaded (duration::max(): for ever).
  // now: the clock, for tests.
  explicit Refreshed(std::string name, Clock::duration max_age = Clock::duration::max(),
                     Now now = &Clock::now)
      : name_(std::move(name)), max_age_(max_age), now_(now) {}

  // The current value; DatabaseUnavailable (a 503) when none was loaded yet, or when the last
  // one is older than max_age.
  std::shared_ptr<const T> get() const {
    std::lock_guard lock(mutex_);
    if (!value_) throw DatabaseUnavailable("the " + name_ + " has not been loaded yet");
    if (max_age_ != Clock::duration::max() && now_() - loaded_at_ >= max_age_) {
      throw DatabaseUnavailable("the " + name_ + " could not be reloaded in time");
    }
    return value_;
  }

  // Stores a freshly loaded value; returns the time its age counts from.
  Clock::time_point store(T loaded) {
    auto value = std::make_shared<const T>(std::move(loaded));
    Clock::time_point loaded_at;
    {
      std::lock_guard lock(mutex_);
      value_ = std::move(value);
      loaded_at = loaded_at_ = now_();
    }
    stored_.notify_all();
    return loaded_at;
  }

  // The value once one other than `seen` is stored, waiting until `until` at most (then the
  // current one, which may still be `seen`).
  std::shared_ptr<const T> newer_than(const std::shared_ptr<const T>& seen,
                                      Clock::time_point until) {
    std::unique_lock lock(mutex_);
    stored_.wait_until(lock, until, [&] { return value_ != seen; });
    return value_;
  }

 private:
  const std::string name_;
  const Clock::duration max_age_;
  const Now now_;
  mutable std::mutex mutex_;
  std::condition_variable stored_;
  std::shared_ptr<const T> value_;
  Clock::time_point loaded_at_{};
};

}  // namespace connector::db
