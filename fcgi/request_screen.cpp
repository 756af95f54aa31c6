#include "request_screen.h"

#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <stdexcept>

namespace connector::fcgi {
namespace {

using Clock = std::chrono::steady_clock;

int make_epoll() {
  const int fd = ::epoll_create1(EPOLL_CLOEXEC);
  if (fd < 0) throw std::runtime_error("epoll_create1 failed");
  return fd;
}

Screened rejected(net::FcgiRejection reason, std::string_view detail) {
  return {Screened::Outcome::kRejected, reason, detail};
}

}  // namespace

RequestScreen::RequestScreen(net::FcgiLimits limits, std::chrono::milliseconds read_timeout)
    : limits_(limits),
      read_timeout_(read_timeout),
      epoll_fd_(make_epoll()),
      buffer_(net::max_request_bytes(limits) + 1) {}

RequestScreen::~RequestScreen() { ::close(epoll_fd_); }

net::FcgiScreen RequestScreen::peek(int fd, bool& peer_closed) {
  const ssize_t n = ::recv(fd, buffer_.data(), buffer_.size(), MSG_PEEK | MSG_DONTWAIT);
  if (n == 0) peer_closed = true;  // nothing queued, and nothing more will come
  if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) peer_closed = true;
  if (n <= 0) return {};
  return net::screen_fcgi_request({buffer_.data(), static_cast<std::size_t>(n)}, limits_);
}

bool RequestScreen::wait_for_more(int fd, Clock::time_point deadline, bool& registered,
                                  bool& hung_up) {
  if (!registered) {
    epoll_event event{};
    event.events = EPOLLIN | EPOLLRDHUP | EPOLLET;
    event.data.fd = fd;
    if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &event) != 0) return false;
    registered = true;
  }
  for (;;) {
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return false;
    epoll_event event{};
    const int ready = ::epoll_wait(epoll_fd_, &event, 1, static_cast<int>(left.count()));
    if (ready > 0) {
      hung_up = (event.events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR)) != 0;
      return true;
    }
    if (ready < 0 && errno != EINTR) return false;
  }
}

Screened RequestScreen::wait(int fd) {
  const auto deadline = Clock::now() + read_timeout_;
  bool registered = false;
  bool hung_up = false;
  Screened result;
  for (;;) {
    bool peer_closed = false;
    const net::FcgiScreen screen = peek(fd, peer_closed);
    if (screen.verdict == net::FcgiVerdict::kRequest) {
      result.outcome = Screened::Outcome::kRequest;
      break;
    }
    if (screen.verdict == net::FcgiVerdict::kRejected) {
      result = rejected(screen.reason, screen.detail);
      break;
    }
    // An abort, a close, or a peer that hung up with its request incomplete: nothing to answer.
    if (screen.verdict == net::FcgiVerdict::kAborted || peer_closed || hung_up) break;
    if (!wait_for_more(fd, deadline, registered, hung_up)) {
      result = rejected(net::FcgiRejection::kDeadline,
                        "sent no complete request within fcgi_read_timeout_ms");
      break;
    }
  }
  if (registered) ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
  return result;
}

}  // namespace connector::fcgi
