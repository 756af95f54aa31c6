#pragma once
// Connections nginx keeps open to the workers (upstream `keepalive`, `fastcgi_keep_conn`)
// between their requests. An idle kept connection waits in this set (its own epoll set, armed
// once per request: EPOLLONESHOT) instead of holding a thread: the thread that answered its
// request parks it here, and whichever thread is free takes it when its next request arrives.
// So a kept connection costs a descriptor, not a thread (at most kMaxParked per process; past
// that a connection is closed after its answer). One idle past fcgi_read_timeout_ms is closed
// (nginx opens a new one when it needs one); the sweep runs on a timer (timer_fd()) that one
// thread at a time serves, so idle threads are not woken for it.
//
// Stopping (reload, recycling, shutdown) drains the set rather than closing it at once: nginx
// sends requests on connections it believes open, and a connection closed under it fails the
// request it was sending (nginx resends it on another entry of the upstream, a few times at
// most). So once draining, the process's free threads keep answering requests that arrive on
// parked connections, each connection is closed after that answer, and one without a request
// for kDrainIdle is closed (a connection whose request has arrived is never closed as idle).
//
// The set hands out tokens, not just descriptors: a connection closed here while its event was
// already on its way to a thread may have its number reused by a new connection, and the
// token's generation tells the two apart.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <unordered_map>

#include "unique_fd.h"

namespace connector::fcgi {

class KeptConnections {
 public:
  using Clock = std::chrono::steady_clock;
  // How long a parked connection may stay idle once the process is stopping.
  static constexpr std::chrono::milliseconds kDrainIdle{500};
  // How long a draining thread waits for a parked connection's request before sweeping again.
  static constexpr int kDrainWaitMs = 50;
  static constexpr std::size_t kMaxParked = 512;

  explicit KeptConnections(std::chrono::milliseconds idle_limit);
  ~KeptConnections() = default;  // closes the connections still parked
  KeptConnections(const KeptConnections&) = delete;
  KeptConnections& operator=(const KeptConnections&) = delete;

  // The set's epoll descriptor: readable while a parked connection has its next request (or
  // was closed by nginx). It goes into the threads' own epoll set, with timer_fd().
  int fd() const { return epoll_fd_.get(); }
  // Readable once per sweep period: the thread that sees it calls on_timer().
  int timer_fd() const { return timer_fd_.get(); }

  // The connection has answered its request and stays open: parked until its next request.
  // Closed at once when it cannot be watched, when kMaxParked are parked, or once draining.
  void park(UniqueFd connection);
  // A parked connection whose next request arrived, now the caller's, waiting at most
  // `timeout_ms`; none (an empty UniqueFd) when none arrived.
  UniqueFd take_ready(int timeout_ms);
  // The sweep timer fired: closes the parked connections idle past their limit.
  void on_timer();
  // Closes the parked connections idle past their limit (idle_limit, or kDrainIdle once
  // draining) that have no request waiting.
  void close_idle();

  // The process is stopping (any number of calls): nothing is parked again, and the parked
  // connections get kDrainIdle from the first call to bring their next request.
  void begin_drain();
  bool empty() const { return count_.load() == 0; }

 private:
  static constexpr std::uint64_t kGenerationMask = 0xffffffffU;
  struct Parked {
    UniqueFd connection;
    std::uint32_t generation;
    Clock::time_point since;
  };

  UniqueFd take(std::uint64_t token);
  void update_count();  // under mutex_

  const UniqueFd epoll_fd_;
  const UniqueFd timer_fd_;
  const std::chrono::milliseconds idle_limit_;
  std::mutex mutex_;
  std::unordered_map<int, Parked> parked_;  // by descriptor number
  std::atomic<std::size_t> count_{0};       // parked_.size(), read without the lock
  std::uint32_t next_generation_ = 0;
  bool draining_ = false;
};

}  // namespace connector::fcgi
