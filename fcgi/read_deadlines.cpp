#include "read_deadlines.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <string>

#include "sweep_period.h"
#include "util/log.h"

namespace connector::fcgi {
namespace {

// One warning per process every 10 s at most: a client that keeps failing must not flood the log.
std::atomic<std::int64_t> last_warning_s{-1000};

void warn_cut(std::chrono::milliseconds limit, unsigned more) {
  if (!util::log_due(last_warning_s, std::chrono::seconds(10))) return;
  util::log_warning("closed " + std::to_string(more) +
                    " FastCGI connection(s) that sent no complete request within " +
                    std::to_string(limit.count()) + " ms (fcgi_read_timeout_ms)");
}

}  // namespace

ReadDeadlines::ReadDeadlines(unsigned threads, std::chrono::milliseconds limit)
    : limit_(limit),
      period_(sweep_period(limit)),
      count_(threads),
      slots_(std::make_unique<Slot[]>(threads)) {}

ReadDeadlines::~ReadDeadlines() {
  stop();
  for (unsigned i = 0; i < count_; ++i) done(i);
}

void ReadDeadlines::start() {
  thread_ = std::thread([this] { run(); });
}

void ReadDeadlines::stop() {
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

bool ReadDeadlines::reading(unsigned slot, int fd) {
  UniqueFd copy(::fcntl(fd, F_DUPFD_CLOEXEC, 0));
  if (!copy) return false;
  auto& s = slots_[slot];
  const std::lock_guard lock(s.mutex);
  s.copy = std::move(copy);
  s.deadline = Clock::now() + limit_;
  s.cut = false;
  return true;
}

void ReadDeadlines::done(unsigned slot) {
  auto& s = slots_[slot];
  const std::lock_guard lock(s.mutex);
  s.copy.reset();
}

void ReadDeadlines::run() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    wake_.wait_for(lock, period_);
    if (stopping_) break;
    lock.unlock();
    const auto now = Clock::now();
    unsigned cut = 0;
    for (unsigned i = 0; i < count_; ++i) {
      auto& s = slots_[i];
      const std::lock_guard slot_lock(s.mutex);
      if (s.copy && !s.cut && now >= s.deadline) {
        // Both directions: the read returns 0 and a write fails; the peer sees the close.
        ::shutdown(s.copy.get(), SHUT_RDWR);
        s.cut = true;
        ++cut;
      }
    }
    if (cut > 0) warn_cut(limit_, cut);
    lock.lock();
  }
}

}  // namespace connector::fcgi
