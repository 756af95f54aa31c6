#include "kept_connections.h"

#include <sys/epoll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <stdexcept>

namespace connector::fcgi {

KeptConnections::KeptConnections(std::chrono::milliseconds idle_limit)
    : epoll_fd_(::epoll_create1(EPOLL_CLOEXEC)),
      idle_limit_(idle_limit),
      period_(std::clamp(std::min(idle_limit, kDrainIdle) / 10, std::chrono::milliseconds(10),
                         std::chrono::milliseconds(250))) {
  if (epoll_fd_ < 0) throw std::runtime_error("epoll_create1 failed");
}

KeptConnections::~KeptConnections() {
  const std::lock_guard lock(mutex_);
  for (const auto& [fd, parked] : parked_) ::close(fd);
  ::close(epoll_fd_);
}

void KeptConnections::park(int fd) {
  const std::lock_guard lock(mutex_);
  if (draining_) {
    ::close(fd);
    return;
  }
  const std::uint32_t generation = next_generation_++;
  epoll_event event{};
  event.events = EPOLLIN | EPOLLRDHUP | EPOLLONESHOT;
  event.data.u64 = (std::uint64_t{generation} << 32) | static_cast<std::uint32_t>(fd);
  // MOD when the connection was parked before (its registration stays, disarmed, while it is
  // served); ADD the first time.
  if (::epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, fd, &event) != 0 &&
      ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &event) != 0) {
    ::close(fd);
    return;
  }
  parked_[fd] = {generation, Clock::now()};
  update_count();
}

int KeptConnections::take_ready(int timeout_ms) {
  epoll_event event{};
  for (;;) {
    const int ready = ::epoll_wait(epoll_fd_, &event, 1, timeout_ms);
    if (ready < 0 && errno == EINTR) continue;
    return ready == 1 ? take(event.data.u64) : -1;
  }
}

// -1 when the token's connection was closed as idle while its event was on its way.
int KeptConnections::take(std::uint64_t token) {
  const int fd = static_cast<int>(token & 0xffffffffU);
  const auto generation = static_cast<std::uint32_t>((token >> 32) & kGenerationMask);
  const std::lock_guard lock(mutex_);
  const auto found = parked_.find(fd);
  if (found == parked_.end() || found->second.generation != generation) return -1;
  parked_.erase(found);
  update_count();
  return fd;
}

void KeptConnections::close_idle() {
  if (empty()) return;
  const std::unique_lock lock(mutex_, std::try_to_lock);
  if (!lock.owns_lock()) return;  // another thread is at it, or parking
  const auto now = Clock::now();
  if (now - last_sweep_ < period_) return;
  last_sweep_ = now;
  const auto limit = draining_ ? kDrainIdle : idle_limit_;
  for (auto it = parked_.begin(); it != parked_.end();) {
    if (now - it->second.since < limit) {
      ++it;
      continue;
    }
    // Out of the set before the close: an event already on its way finds no entry in take().
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, it->first, nullptr);
    ::close(it->first);
    it = parked_.erase(it);
  }
  update_count();
}

int KeptConnections::wait_ms() const { return empty() ? -1 : static_cast<int>(period_.count()); }

bool KeptConnections::begin_drain() {
  const std::lock_guard lock(mutex_);
  if (draining_) return false;
  draining_ = true;
  // Each gets kDrainIdle from now to bring its next request.
  const auto now = Clock::now();
  for (auto& [fd, parked] : parked_) parked.since = now;
  return true;
}

void KeptConnections::update_count() { count_.store(parked_.size()); }

}  // namespace connector::fcgi
