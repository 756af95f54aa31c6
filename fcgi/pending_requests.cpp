#include "pending_requests.h"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "sweep_period.h"

namespace connector::fcgi {
namespace {

int checked(int fd, const char* what) {
  if (fd < 0) throw std::runtime_error(std::string(what) + " failed");
  return fd;
}

void signal(int event_fd) {
  const std::uint64_t one = 1;
  [[maybe_unused]] const auto written = ::write(event_fd, &one, sizeof one);
}

void reset(int event_fd) {
  std::uint64_t count = 0;
  [[maybe_unused]] const auto read = ::read(event_fd, &count, sizeof count);
}

}  // namespace

PendingRequests::PendingRequests(net::FcgiLimits limits, std::chrono::milliseconds read_timeout,
                                 std::atomic<std::uint32_t>& count, std::size_t max_waiting)
    : read_timeout_(read_timeout),
      max_waiting_(max_waiting),
      count_(count),
      sweep_period_(sweep_period(read_timeout)),
      epoll_fd_(checked(::epoll_create1(EPOLL_CLOEXEC), "epoll_create1")),
      ready_fd_(checked(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK), "eventfd")),
      stop_fd_(checked(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK), "eventfd")),
      screen_(limits) {
  epoll_event stop{};
  stop.events = EPOLLIN;
  stop.data.fd = stop_fd_;
  if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, stop_fd_, &stop) != 0) {
    throw std::runtime_error("epoll_ctl failed");
  }
}

PendingRequests::~PendingRequests() {
  signal(stop_fd_);
  if (thread_.joinable()) thread_.join();
  for (const auto& [fd, waiting] : waiting_) ::close(fd);
  for (const int fd : ready_) ::close(fd);
  ::close(stop_fd_);
  ::close(ready_fd_);
  ::close(epoll_fd_);
}

void PendingRequests::start() {
  thread_ = std::thread([this] { run(); });
}

void PendingRequests::add(int fd, Clock::time_point deadline) {
  std::string_view refusal =
      "no whole request on arrival while the most connections allowed per process "
      "(PendingRequests::kMaxWaiting) were waiting for theirs";
  {
    const std::lock_guard lock(mutex_);
    if (waiting_.size() < max_waiting_) {
      // In the map (the sweep's list) before epoll can report it, so that the thread, which
      // erases it when it is done with the connection, always finds it there.
      waiting_.emplace(fd, Waiting{deadline, 0});
      epoll_event event{};
      event.events = EPOLLIN | EPOLLRDHUP | EPOLLET;
      event.data.fd = fd;
      // ADD reports at once what is already queued, so no byte that came after the caller's
      // look is missed.
      if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &event) == 0) {
        update_count();
        return;
      }
      waiting_.erase(fd);
      refusal = "no whole request on arrival, and the connection could not be watched";
    }
  }
  note_rejection({Screened::Outcome::kRejected, net::FcgiRejection::kDeadline, refusal},
                 read_timeout_);
  ::close(fd);
}

int PendingRequests::take() {
  const std::lock_guard lock(mutex_);
  if (ready_.empty()) return -1;
  const int fd = ready_.front();
  ready_.pop_front();
  if (ready_.empty()) reset(ready_fd_);
  return fd;
}

bool PendingRequests::empty() {
  const std::lock_guard lock(mutex_);
  return waiting_.empty() && ready_.empty();
}

void PendingRequests::run() {
  std::array<epoll_event, 64> events{};
  auto next_sweep = Clock::now() + sweep_period_;
  for (;;) {
    const auto wait = std::chrono::ceil<std::chrono::milliseconds>(next_sweep - Clock::now());
    const int ready = ::epoll_wait(epoll_fd_, events.data(), static_cast<int>(events.size()),
                                   static_cast<int>(std::max<std::int64_t>(wait.count(), 0)));
    for (int i = 0; i < ready; ++i) {
      if (events[i].data.fd == stop_fd_) return;
      on_event(events[i].data.fd, (events[i].events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR)) != 0);
    }
    if (Clock::now() >= next_sweep) {
      sweep();
      next_sweep = Clock::now() + sweep_period_;
    }
  }
}

void PendingRequests::on_event(int fd, bool hung_up) {
  std::size_t need_bytes = 0;
  {
    const std::lock_guard lock(mutex_);
    const auto found = waiting_.find(fd);
    if (found != waiting_.end()) need_bytes = found->second.need_bytes;
  }
  // A look at fewer bytes than the awaited record needs would screen them all again for
  // nothing: a peer sending a record a byte at a time costs an ioctl per byte, not a look.
  if (!hung_up && RequestScreen::queued_bytes(fd) < need_bytes) return;
  const Screened screened = screen_.look(fd);
  switch (screened.outcome) {
    case Screened::Outcome::kRequest:
      make_ready(fd);
      return;
    case Screened::Outcome::kIncomplete:
      // A peer that stopped sending with its request unfinished will never finish it.
      if (hung_up) {
        drop(fd, {});
      } else {
        const std::lock_guard lock(mutex_);
        if (const auto found = waiting_.find(fd); found != waiting_.end()) {
          found->second.need_bytes = screened.need_bytes;
        }
      }
      return;  // else wait for the next edge
    case Screened::Outcome::kClosed:
    case Screened::Outcome::kRejected:
      drop(fd, screened);
      return;
  }
}

void PendingRequests::make_ready(int fd) {
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
  const std::lock_guard lock(mutex_);
  waiting_.erase(fd);
  update_count();
  if (ready_.empty()) signal(ready_fd_);
  ready_.push_back(fd);
}

void PendingRequests::drop(int fd, const Screened& why) {
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
  {
    const std::lock_guard lock(mutex_);
    waiting_.erase(fd);
    update_count();
  }
  if (why.outcome == Screened::Outcome::kRejected) note_rejection(why, read_timeout_);
  ::close(fd);
}

void PendingRequests::sweep() {
  const auto now = Clock::now();
  std::vector<int> late;
  {
    const std::lock_guard lock(mutex_);
    for (const auto& [fd, waiting] : waiting_) {
      if (now >= waiting.deadline) late.push_back(fd);
    }
  }
  for (const int fd : late) {
    // Its last bytes may have come since the last event was handled.
    const Screened screened = screen_.look(fd);
    if (screened.outcome == Screened::Outcome::kRequest) {
      make_ready(fd);
    } else if (screened.outcome == Screened::Outcome::kIncomplete) {
      drop(fd, {Screened::Outcome::kRejected, net::FcgiRejection::kDeadline, {}});
    } else {
      drop(fd, screened);
    }
  }
}

void PendingRequests::update_count() {
  count_.store(static_cast<std::uint32_t>(waiting_.size()), std::memory_order_relaxed);
}

}  // namespace connector::fcgi
