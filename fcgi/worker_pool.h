#pragma once
// The threads of one worker process. Each waits in the process's epoll set (the shared listening
// socket, the kept connections, the stop signal), takes a connection, and answers through its
// own Router and database connections; so stopping (drain) wakes every idle thread at once and
// lets busy ones finish their request. The threads accept connections themselves and hand them to
// libfcgi open, so that every one is checked against FCGI_WEB_SERVER_ADDRS and read within
// fcgi_read_timeout_ms.
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "config/config.h"
#include "db/database.h"
#include "db/reference_store.h"
#include "db/replica_monitor.h"
#include "db/server_prober.h"
#include "db/snapshot_refresher.h"
#include "db/supply_store.h"
#include "kept_connections.h"
#include "metrics/scoreboard.h"
#include "net/web_server_addrs.h"
#include "pending_requests.h"
#include "read_deadlines.h"
#include "request_screen.h"
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
  void serve(unsigned slot);
  int make_epoll() const;
  // A new connection, or a kept one whose next request arrived; -1 once stopping.
  int wait_for_work();
  int accept_connection();  // an accepted, checked connection; -1 if none
  // True when `fd` holds a whole request the screen passed; otherwise the connection is now
  // pending_'s or closed.
  bool screened_whole(RequestScreen& screen, int fd);
  void count_request();
  void beat();  // this process is making progress (metrics::ProcessSlot::heartbeat_ms)

  int listen_fd_;
  int stop_fd_;  // an eventfd: readable once stopping
  // FCGI_WEB_SERVER_ADDRS, checked for TCP peers.
  const net::WebServerAddrs web_servers_;
  const std::chrono::milliseconds read_timeout_;
  ReadDeadlines read_deadlines_;
  const config::Config& config_;
  metrics::ProcessSlot& slot_;
  const util::AccessLog& access_log_;
  db::ReferenceCache reference_;
  db::SupplyCache supply_;
  const std::vector<std::string> read_servers_;  // for the operations pages
  db::CircuitBreakers breakers_;
  db::ReplicaLagMonitor lag_monitor_;
  db::SnapshotRefresher refresher_;
  db::ServerProber prober_;
  KeptConnections kept_;
  PendingRequests pending_;  // connections whose request is not whole yet
  const int epoll_fd_;       // shared by the threads: see make_epoll()
  std::atomic<bool> stopping_{false};
  std::atomic<bool> recycle_due_{false};
  std::atomic<std::uint64_t> served_{0};
  std::vector<std::thread> threads_;
};

}  // namespace connector::fcgi
