#pragma once
// The master process: forks `processes` worker processes over the shared listening socket and
// supervises them, like php-fpm's master. It replaces a process that crashed or served
// max_requests, reloads on SIGHUP (a new generation starts before the old one drains, so no
// request is dropped), drains on SIGTERM/SIGINT, and talks to systemd (READY, WATCHDOG,
// RELOADING, STOPPING). It holds no threads and no database connection, so fork() is safe.
#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

#include "config/config.h"
#include "metrics/scoreboard.h"

namespace connector::fcgi {

class Master {
 public:
  Master(std::string config_path, config::Config config, int listen_fd, metrics::Scoreboard& board);

  // Runs until SIGTERM or SIGINT and every worker process has exited; returns the exit status.
  int run();

 private:
  using Clock = std::chrono::steady_clock;

  struct Child {
    pid_t pid;
    unsigned generation;
    std::size_t slot;
    Clock::time_point started;
  };

  void spawn_missing();
  bool spawn();  // false when no process could be started (no slot, fork failed)
  void reap();
  void reload();
  void stop();
  void publish_config();
  std::size_t free_slot() const;
  unsigned current_children() const;

  std::string config_path_;
  config::Config config_;
  int listen_fd_;
  metrics::Scoreboard& board_;
  std::vector<Child> children_;
  unsigned generation_ = 0;
  Clock::time_point next_spawn_{};  // crash-loop back-off
  bool stopping_ = false;           // every process was told to drain
};

}  // namespace connector::fcgi
