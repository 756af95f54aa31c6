#pragma once
// The master process: forks `processes` worker processes over the shared listening socket and
// supervises them, like php-fpm's master. It replaces a process that crashed or served
// max_requests, reloads on SIGHUP (a new generation starts before the old one drains, so no
// request is dropped), drains on SIGTERM/SIGINT, and talks to systemd (READY, WATCHDOG,
// RELOADING, STOPPING). A retiring process (an old generation, or one past max_requests) that
// has not ended within shutdown_timeout_s is killed. The watchdog is fed only while every
// serving process shows a heartbeat (a thread that took work, or found none, lately): a pool
// whose processes are all stuck stops feeding it, and systemd restarts the service. It holds no
// threads and no database connection, so fork() is safe.
#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "config/config.h"
#include "metrics/scoreboard.h"
#include "pool/shared_state.h"

namespace connector::fcgi {

class Master {
 public:
  Master(std::string config_path, config::Config config, int listen_fd, metrics::Scoreboard& board,
         pool::SharedState& state);

  // Runs until SIGTERM or SIGINT and every worker process has exited; returns the exit status.
  int run();

 private:
  using Clock = std::chrono::steady_clock;

  struct Child {
    pid_t pid;
    unsigned generation;
    std::size_t slot;
    Clock::time_point started;
    std::optional<Clock::time_point> retiring_since;  // told to drain, or draining by itself
    bool killed = false;                              // by kill_overdue()
  };

  void spawn_missing();
  bool spawn();  // false when no process could be started (no slot, fork failed)
  void reap();
  // Kills a retiring process that has not ended within shutdown_timeout_s: a request stuck
  // past every deadline must not keep an old generation, and its slot, for ever.
  void kill_overdue();
  bool retiring(const Child& child) const;
  // Whether every serving process shows a recent heartbeat; false names the first that does not.
  bool pool_progressing(pid_t& stuck) const;
  void feed_watchdog();
  void reload();
  void stop();
  void publish_config();
  std::size_t free_slot() const;
  unsigned current_children() const;

  std::string config_path_;
  config::Config config_;
  int listen_fd_;
  metrics::Scoreboard& board_;
  pool::SharedState& state_;  // leases, the servers' slots, the processes' retiring and heartbeat
  std::vector<Child> children_;
  unsigned generation_ = 0;
  Clock::time_point next_spawn_{};  // crash-loop back-off
  bool stopping_ = false;           // every process was told to drain
  bool watchdog_withheld_ = false;  // logged once per episode
};

}  // namespace connector::fcgi
