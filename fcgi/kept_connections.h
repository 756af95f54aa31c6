#pragma once
// Connections nginx keeps open to the workers (upstream `keepalive`, `fastcgi_keep_conn`)
// between their requests. An idle kept connection waits in the process's one epoll set, the set
// the pool's threads wait on, armed once per request (EPOLLONESHOT), instead of holding a
// thread: the thread that answered its request parks it here, and the one thread its next
// request wakes takes it. (Registered in the threads' own set, not in a set of its own nested in
// theirs: a nested set is one level-triggered source, and each thread that collects it wakes the
// next, so every request woke every idle thread; docs/BENCHMARKS.md, issue 35.)
// So a kept connection costs a descriptor, not a thread (at most kMaxParked per process; past
// that a connection is closed after its answer). One idle past fcgi_read_timeout_ms is closed
// (nginx opens a new one when it needs one); the sweep runs on a timer (timer_fd()) that one
// thread at a time serves, so idle threads are not woken for it.
// The set's events carry tokens (is_token()), which the pool hands to take().
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
#include <vector>

#include "util/unique_fd.h"

namespace connector::fcgi {

using util::checked_fd;
using util::UniqueFd;

class KeptConnections {
 public:
  using Clock = std::chrono::steady_clock;
  // How long a parked connection may stay idle once the process is stopping.
  static constexpr std::chrono::milliseconds kDrainIdle{500};
  // How long a draining thread waits for a parked connection's request before sweeping again.
  static constexpr int kDrainWaitMs = 50;
  static constexpr std::size_t kMaxParked = 512;

  // Parks connections in `epoll_fd` (borrowed: the pool's set, which outlives this), and adds
  // its sweep timer there too.
  KeptConnections(int epoll_fd, std::chrono::milliseconds idle_limit);
  ~KeptConnections() = default;  // closes the connections still parked
  KeptConnections(const KeptConnections&) = delete;
  KeptConnections& operator=(const KeptConnections&) = delete;

  // True for the data of an epoll event that a parked connection raised (its next request
  // arrived, or nginx closed it): hand it to take().
  static bool is_token(std::uint64_t data) { return (data & kTokenTag) != 0; }
  // Readable once per sweep period (edge-triggered): the thread that sees it calls on_timer().
  int timer_fd() const { return timer_fd_.get(); }

  // The connection has answered its request and stays open: parked until its next request.
  // Closed at once when it cannot be watched, when kMaxParked are parked, or once draining.
  void park(UniqueFd connection);
  // The parked connection of an event's token, now the caller's; none when it was closed as
  // idle while its event was on its way.
  UniqueFd take(std::uint64_t token);
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
  // A token: the tag, a generation (31 bits) and the descriptor number (32 bits). The tag
  // tells it from the pool's own descriptors, registered with their number.
  static constexpr std::uint64_t kTokenTag = std::uint64_t{1} << 63;
  static constexpr std::uint64_t kGenerationMask = 0x7fffffffU;
  struct Parked {
    UniqueFd connection;
    std::uint32_t generation;
    Clock::time_point since;
  };

  void update_count();  // under mutex_

  const int epoll_fd_;
  const UniqueFd timer_fd_;
  const std::chrono::milliseconds idle_limit_;
  std::mutex mutex_;
  std::unordered_map<int, Parked> parked_;     // by descriptor number
  std::atomic<std::size_t> count_{0};          // parked_.size(), read without the lock
  std::atomic<unsigned> arming_{0};            // parks between their map entry and epoll_ctl
  std::vector<UniqueFd> closing_;              // swept, closed once arming_ is 0
  std::atomic<std::size_t> closing_count_{0};  // closing_.size(), read without the lock
  std::uint32_t next_generation_ = 0;
  bool draining_ = false;
};

}  // namespace connector::fcgi
