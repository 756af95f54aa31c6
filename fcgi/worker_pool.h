#pragma once
// The threads of one worker process. Each waits (epoll) on the shared listening socket together
// with the process's stop signal, accepts, and answers through its own Router and database
// connections; so stopping (drain) wakes every idle thread at once and lets busy ones finish
// their request.
#include <atomic>
#include <thread>
#include <vector>

#include "config/config.h"
#include "db/database.h"
#include "db/reference_store.h"
#include "db/server_prober.h"
#include "db/snapshot_refresher.h"
#include "db/supply_store.h"
#include "metrics/scoreboard.h"
#include "util/access_log.h"

namespace connector::fcgi {

class WorkerPool {
 public:
  WorkerPool(int listen_fd, const config::Config& config, metrics::ProcessSlot& slot,
             const util::AccessLog& access_log);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  void start();
  // Stops accepting; requests in flight finish. Safe from any thread, more than once.
  void request_stop();
  void join();
  // True once the process has served max_requests and should be replaced.
  bool recycle_due() const { return recycle_due_; }

 private:
  void serve();
  int make_epoll() const;
  bool wait_for_connection(int epoll_fd);         // false when stopping
  bool wait_for_next_request(int connection_fd);  // on a kept connection; false when stopping
  void count_request();

  int listen_fd_;
  int stop_fd_;  // an eventfd: readable once stopping
  const config::Config& config_;
  metrics::ProcessSlot& slot_;
  const util::AccessLog& access_log_;
  db::ReferenceCache reference_;
  db::SupplyCache supply_;
  db::CircuitBreakers breakers_;
  db::SnapshotRefresher refresher_;
  db::ServerProber prober_;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> recycle_due_{false};
  std::atomic<std::uint64_t> served_{0};
  std::vector<std::thread> threads_;
};

}  // namespace connector::fcgi
