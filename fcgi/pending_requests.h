#pragma once
// Connections whose request is not whole yet. They wait here, in one thread per process, rather
// than in a pool thread: a peer that sends its request a byte at a time (slowloris), or never
// finishes it, costs a descriptor for at most fcgi_read_timeout_ms, never a thread.
//
// The thread watches them edge-triggered in its own epoll set (the bytes stay queued, since the
// screen only peeks at them, so the connection stays readable: only an edge says that more have
// arrived) and screens each one again as its bytes come: once as many are queued as the record
// it waits for needs (an ioctl per edge until then), since each look screens from the first
// byte. A connection whose request is now whole
// moves to a ready queue that the pool's threads take from (ready_fd() in their epoll set); one
// the screen rejects, or whose peer hangs up, is closed at once; one past its deadline is closed
// by a sweep, and counted as `deadline`. Only this thread closes a waiting connection, so its
// number cannot be reused while an event for it is being handled.
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "fastcgi/fcgi_screen.h"
#include "request_screen.h"
#include "util/unique_fd.h"

namespace connector::fcgi {

using util::checked_fd;
using util::UniqueFd;

class PendingRequests {
 public:
  using Clock = std::chrono::steady_clock;
  // Per process. Past it a connection without its whole request is closed at once (counted as
  // `deadline`): a flood of them then costs nginx's legitimate requests nothing but a retry.
  static constexpr std::size_t kMaxWaiting = 1024;

  // `count` is kept equal to the connections waiting (the process's /status and /metrics).
  PendingRequests(fastcgi::FcgiLimits limits, std::chrono::milliseconds read_timeout,
                  std::atomic<std::uint32_t>& count, std::size_t max_waiting = kMaxWaiting);
  ~PendingRequests();  // stops the thread; the connections still here are closed
  PendingRequests(const PendingRequests&) = delete;
  PendingRequests& operator=(const PendingRequests&) = delete;

  void start();

  // The connection has no whole request yet: it waits here until it has, until it is closed,
  // or until `deadline`. Closed at once (and counted as `deadline`) when max_waiting are
  // waiting.
  void add(UniqueFd connection, Clock::time_point deadline);
  // Readable while a connection with a whole request waits for a pool thread (an eventfd).
  int ready_fd() const { return ready_fd_.get(); }
  // A connection whose whole request is queued, now the caller's; none when none is.
  UniqueFd take();
  // Nothing waiting and nothing ready: a stopping process may end.
  bool empty();

 private:
  void run();
  void on_event(int fd, bool hung_up);
  void sweep();  // closes the connections past their deadline
  void drop(int fd, const Screened& why);
  void make_ready(int fd);

  void update_count();  // under mutex_

  const std::chrono::milliseconds read_timeout_;
  const std::size_t max_waiting_;
  std::atomic<std::uint32_t>& count_;
  const std::chrono::milliseconds sweep_period_;
  const UniqueFd epoll_fd_;
  const UniqueFd ready_fd_;
  const UniqueFd stop_fd_;
  RequestScreen screen_;  // used by the thread only
  std::mutex mutex_;
  struct Waiting {
    UniqueFd connection;
    Clock::time_point deadline;
    std::size_t need_bytes = 0;  // no look before this many bytes are queued (or a hang-up)
  };
  std::unordered_map<int, Waiting> waiting_;  // by descriptor number
  std::deque<UniqueFd> ready_;
  std::thread thread_;
};

}  // namespace connector::fcgi
