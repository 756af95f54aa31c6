#include "util/background_loop.h"

#include <pthread.h>

namespace connector::util {

void BackgroundLoop::launch(const char* name, std::function<void()> body) {
  thread_ = std::thread([name, body = std::move(body)] {
    ::pthread_setname_np(::pthread_self(), name);
    body();
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

}  // namespace connector::util
