#include "pending_requests.h"

#include <pthread.h>
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

void signal(const UniqueFd& event_fd) {
  const std::uint64_t one = 1;
  [[maybe_unused]] const auto written = ::write(event_fd.get(), &one, sizeof one);
}

void reset(const UniqueFd& event_fd) {
  std::uint64_t count = 0;
  [[maybe_unused]] const auto read = ::read(event_fd.get(), &count, sizeof count);
}

}  // namespace

PendingRequests::PendingRequests(fastcgi::FcgiLimits limits, std::chrono::milliseconds read_timeout,
                                 std::atomic<std::uint32_t>& count, std::size_t max_waiting)
    : read_timeout_(read_timeout),
      max_waiting_(max_waiting),
      count_(count),
      sweep_period_(sweep_period(read_timeout)),
      epoll_fd_(checked_fd(::epoll_create1(EPOLL_CLOEXEC), "epoll_create1")),
      ready_fd_(checked_fd(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK), "eventfd")),
      stop_fd_(checked_fd(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK), "eventfd")),
      screen_(limits) {
  epoll_event stop{};
  stop.events = EPOLLIN;
  stop.data.fd = stop_fd_.get();
  if (::epoll_ctl(epoll_fd_.get(), EPOLL_CTL_ADD, stop_fd_.get(), &stop) != 0) {
    throw std::runtime_error("epoll_ctl failed");
  }
}

PendingRequests::~PendingRequests() {
  signal(stop_fd_);
  if (thread_.joinable()) thread_.join();
}

void PendingRequests::start() {
  thread_ = std::thread([this] {
    ::pthread_setname_np(::pthread_self(), "pending");
    run();
  });
}

void PendingRequests::add(UniqueFd connection, Clock::time_point deadline) {
  const int fd = connection.get();
  std::string_view refusal =
      "no whole request on arrival while the most connections allowed per process "
      "(PendingRequests::kMaxWaiting) were waiting for theirs";
  {
    const std::lock_guard lock(mutex_);
    if (waiting_.size() < max_waiting_) {
      // In the map (the sweep's list) before epoll can report it, so that the thread, which
      // erases it when it is done with the connection, always finds it there.
      auto& waiting = waiting_[fd] = Waiting{std::move(connection), deadline, 0};
      epoll_event event{};
      event.events = EPOLLIN | EPOLLRDHUP | EPOLLET;
      event.data.fd = fd;
      // ADD reports at once what is already queued, so no byte that came after the caller's
      // look is missed.
      if (::epoll_ctl(epoll_fd_.get(), EPOLL_CTL_ADD, fd, &event) == 0) {
        update_count();
        return;
      }
      connection = std::move(waiting.connection);
      waiting_.erase(fd);
      refusal = "no whole request on arrival, and the connection could not be watched";
    }
  }
  note_rejection({Screened::Outcome::kRejected, fastcgi::FcgiRejection::kDeadline, refusal},
                 read_timeout_);
}  // the connection is closed here

UniqueFd PendingRequests::take() {
  const std::lock_guard lock(mutex_);
  if (ready_.empty()) return {};
  UniqueFd connection = std::move(ready_.front());
  ready_.pop_front();
  if (ready_.empty()) reset(ready_fd_);
  return connection;
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
    const int ready = ::epoll_wait(epoll_fd_.get(), events.data(), static_cast<int>(events.size()),
                                   static_cast<int>(std::max<std::int64_t>(wait.count(), 0)));
    for (int i = 0; i < ready; ++i) {
      if (events[i].data.fd == stop_fd_.get()) return;
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
  ::epoll_ctl(epoll_fd_.get(), EPOLL_CTL_DEL, fd, nullptr);
  const std::lock_guard lock(mutex_);
  const auto found = waiting_.find(fd);
  if (found == waiting_.end()) return;
  if (ready_.empty()) signal(ready_fd_);
  ready_.push_back(std::move(found->second.connection));
  waiting_.erase(found);
  update_count();
}

void PendingRequests::drop(int fd, const Screened& why) {
  ::epoll_ctl(epoll_fd_.get(), EPOLL_CTL_DEL, fd, nullptr);
  UniqueFd connection;  // closed on return, after the lock is released
  {
    const std::lock_guard lock(mutex_);
    if (const auto found = waiting_.find(fd); found != waiting_.end()) {
      connection = std::move(found->second.connection);
      waiting_.erase(found);
    }
    update_count();
  }
  if (why.outcome == Screened::Outcome::kRejected) note_rejection(why, read_timeout_);
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
      drop(fd, {Screened::Outcome::kRejected, fastcgi::FcgiRejection::kDeadline, {}});
    } else {
      drop(fd, screened);
    }
  }
}

void PendingRequests::update_count() {
  count_.store(static_cast<std::uint32_t>(waiting_.size()), std::memory_order_relaxed);
}

}  // namespace connector::fcgi
