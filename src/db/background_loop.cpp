#include "db/background_loop.h"

#include <pthread.h>

#include "db/connection.h"

namespace connector::db {

void BackgroundLoop::start(const char* name, Round round) {
  thread_ = std::thread([this, name, round = std::move(round)] {
    ::pthread_setname_np(::pthread_self(), name);
    run(round);
  });
  std::unique_lock lock(mutex_);
  wake_.wait(lock, [this] { return first_round_done_ || stopping_; });
}

void BackgroundLoop::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void BackgroundLoop::run(const Round& round) {
  DriverThreadScope driver_thread;
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    lock.unlock();
    const auto wait = round();
    lock.lock();
    if (!first_round_done_) {
      first_round_done_ = true;
      wake_.notify_all();
    }
    wake_.wait_for(lock, wait, [this] { return stopping_; });
  }
}

}  // namespace connector::db
