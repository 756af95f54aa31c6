#include "kept_connections.h"

#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <algorithm>
#include <stdexcept>

#include "sweep_period.h"

namespace connector::fcgi {
namespace {

// A periodic timer: every sweep_period() of the idle limit.
UniqueFd make_sweep_timer(std::chrono::milliseconds idle_limit) {
  auto timer =
      checked_fd(::timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC), "timerfd_create");
  const auto period = sweep_period(idle_limit);
  const timespec every{0, static_cast<long>(period.count()) * 1'000'000};
  const itimerspec spec{every, every};
  if (::timerfd_settime(timer.get(), 0, &spec, nullptr) != 0) {
    throw std::runtime_error("timerfd_settime failed");
  }
  return timer;
}

// What a parked connection holds that is not read yet.
enum class Input { kNone, kRequest, kClosed };
Input pending_input(int fd) {
  char byte;
  const ssize_t n = ::recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  if (n > 0) return Input::kRequest;
  return n == 0 ? Input::kClosed : Input::kNone;
}

}  // namespace

KeptConnections::KeptConnections(int epoll_fd, std::chrono::milliseconds idle_limit)
    : epoll_fd_(epoll_fd), timer_fd_(make_sweep_timer(idle_limit)), idle_limit_(idle_limit) {
  epoll_event event{};
  event.events = EPOLLIN | EPOLLET;  // one thread per expiration
  event.data.u64 = static_cast<std::uint32_t>(timer_fd_.get());
  if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, timer_fd_.get(), &event) != 0) {
    throw std::runtime_error("epoll_ctl failed");
  }
}

void KeptConnections::park(UniqueFd connection) {
  const int fd = connection.get();
  std::uint64_t token = 0;
  {
    const std::lock_guard lock(mutex_);
    if (draining_ || parked_.size() >= kMaxParked) return;  // closed on return
    const auto generation = static_cast<std::uint32_t>(next_generation_++ & kGenerationMask);
    token = kTokenTag | (std::uint64_t{generation} << 32) | static_cast<std::uint32_t>(fd);
    parked_[fd] = {std::move(connection), generation, Clock::now()};
    update_count();
    arming_.fetch_add(1);
  }
  // Armed once it is in the map, and outside the lock: nginx sends the next request as soon as
  // it has the answer, and the thread that request wakes must find the connection here without
  // waiting for this one (a futex wait per answer, measured). The sweep may close it meanwhile
  // (nginx closed it): the sweep then keeps the descriptor open until no park is arming
  // (arming_), so its number cannot be reused under this epoll_ctl, which at worst arms the
  // dead connection's own file (closed, and so out of the set, by the sweep).
  epoll_event event{};
  event.events = EPOLLIN | EPOLLRDHUP | EPOLLONESHOT;
  event.data.u64 = token;
  // MOD when the connection was parked before (its registration stays, disarmed, while it is
  // served); ADD the first time.
  const bool armed = ::epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, fd, &event) == 0 ||
                     ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &event) == 0;
  arming_.fetch_sub(1);
  if (!armed) take(token);  // not watched: closed (if still here) rather than parked for ever
}

UniqueFd KeptConnections::take(std::uint64_t token) {
  const int fd = static_cast<int>(token & 0xffffffffU);
  const auto generation = static_cast<std::uint32_t>((token >> 32) & kGenerationMask);
  const std::lock_guard lock(mutex_);
  const auto found = parked_.find(fd);
  if (found == parked_.end() || found->second.generation != generation) return {};
  UniqueFd connection = std::move(found->second.connection);
  parked_.erase(found);
  update_count();
  return connection;
}

void KeptConnections::on_timer() {
  std::uint64_t expirations = 0;
  // Another thread may have read it first (EAGAIN): then it sweeps.
  if (::read(timer_fd_.get(), &expirations, sizeof expirations) > 0) close_idle();
}

void KeptConnections::close_idle() {
  if (empty() && closing_count_.load() == 0) return;
  const std::unique_lock lock(mutex_, std::try_to_lock);
  if (!lock.owns_lock()) return;  // another thread is at it, or parking
  const auto now = Clock::now();
  const auto limit = draining_ ? kDrainIdle : idle_limit_;
  for (auto it = parked_.begin(); it != parked_.end();) {
    // A connection whose request has arrived is about to be taken, not idle; one nginx has
    // closed goes now, whatever its age.
    const Input input = pending_input(it->first);
    if (input == Input::kRequest || (input == Input::kNone && now - it->second.since < limit)) {
      ++it;
      continue;
    }
    // Out of the set before the close: an event already on its way finds no entry in take().
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, it->first, nullptr);
    closing_.push_back(std::move(it->second.connection));
    it = parked_.erase(it);
  }
  // Closed only while no park is between its map entry and its epoll_ctl (see park()). Read
  // under the lock: a park that counts itself after this read parks a descriptor of its own.
  if (arming_.load() == 0) closing_.clear();
  closing_count_.store(closing_.size());
  update_count();
}

void KeptConnections::begin_drain() {
  const std::lock_guard lock(mutex_);
  if (draining_) return;
  draining_ = true;
  const auto now = Clock::now();
  for (auto& [fd, parked] : parked_) parked.since = now;
}

void KeptConnections::update_count() { count_.store(parked_.size()); }

}  // namespace connector::fcgi
