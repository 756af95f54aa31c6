#pragma once
// Connections nginx keeps open to the workers (upstream `keepalive`, `fastcgi_keep_conn`)
// between their requests. An idle kept connection waits in this set (its own epoll set, armed
// once per request: EPOLLONESHOT) instead of holding a thread: the thread that answered its
// request parks it here, and whichever thread is free takes it when its next request arrives.
// So any number of kept connections costs descriptors, not threads. One idle past
// fcgi_read_timeout_ms is closed (nginx opens a new one when it needs one).
//
// Stopping (reload, recycling, shutdown) drains the set rather than closing it at once: nginx
// sends requests on connections it believes open, and a connection closed under it fails the
// request it was sending (nginx resends it, but only a few times). So once draining, a parked
// connection is closed after answering its next request, or after kDrainIdle without one.
//
// The set hands out tokens, not just descriptors: a connection closed here while its event was
// already on its way to a thread may have its number reused by a new connection, and the
// token's generation tells the two apart.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <unordered_map>

namespace connector::fcgi {

class KeptConnections {
 public:
  using Clock = std::chrono::steady_clock;
  // How long a parked connection may stay idle once the process is stopping.
  static constexpr std::chrono::milliseconds kDrainIdle{500};

  explicit KeptConnections(std::chrono::milliseconds idle_limit);
  ~KeptConnections();  // closes the connections still parked
  KeptConnections(const KeptConnections&) = delete;
  KeptConnections& operator=(const KeptConnections&) = delete;

  // The set's epoll descriptor: readable while a parked connection has its next request (or
  // was closed by nginx). It goes into the threads' own epoll set.
  int fd() const { return epoll_fd_; }

  // Connection `fd` has answered its request and stays open: parked until its next request.
  // Closed at once when it cannot be watched, or once draining.
  void park(int fd);
  // A parked connection whose next request arrived, now the caller's, waiting at most
  // `timeout_ms` (-1: for ever); -1 when none.
  int take_ready(int timeout_ms);
  // Closes the parked connections idle past their limit (at most one sweep per period).
  void close_idle();
  // How long a thread may wait for events before close_idle() is due: -1 (for ever) when no
  // connection is parked.
  int wait_ms() const;

  // The process is stopping: true for the first caller, which then serves the set until it is
  // empty (take_ready, close_idle); from now on no connection is parked again.
  bool begin_drain();
  bool empty() const { return count_.load() == 0; }

 private:
  static constexpr std::uint64_t kGenerationMask = 0xffffffffU;
  struct Parked {
    std::uint32_t generation;
    Clock::time_point since;
  };

  int take(std::uint64_t token);
  void update_count();  // under mutex_

  const int epoll_fd_;
  const std::chrono::milliseconds idle_limit_;
  const std::chrono::milliseconds period_;
  std::mutex mutex_;
  std::unordered_map<int, Parked> parked_;
  std::atomic<std::size_t> count_{0};  // parked_.size(), read without the lock
  std::uint32_t next_generation_ = 0;
  bool draining_ = false;
  Clock::time_point last_sweep_{};
};

}  // namespace connector::fcgi
