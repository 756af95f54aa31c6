#pragma once
// The threads of one worker process. Each waits in the process's epoll set (the shared listening
// socket, the kept connections, the stop signal), takes a connection, and answers through its
// own Router and database connections; so stopping (drain) wakes every idle thread at once and
// lets busy ones finish their request. The threads accept connections themselves and hand them to
// libfcgi open, so that every one is checked against FCGI_WEB_SERVER_ADDRS and read within
// fcgi_read_timeout_ms.
#include <sys/epoll.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "config/config.h"
#include "db/connection.h"
#include "db/refreshed_reference.h"
#include "db/refreshed_supply.h"
#include "db/refresher.h"
#include "db/replica_monitor.h"
#include "db/server_prober.h"
#include "events/publisher.h"
#include "fastcgi/web_server_addrs.h"
#include "kept_connections.h"
#include "metrics/scoreboard.h"
#include "pending_requests.h"
#include "pool/process_control.h"
#include "request_screen.h"
#include "util/access_log.h"
#include "util/unique_fd.h"

namespace connector::fcgi {
class LibfcgiRequest;  // libfcgi_request.h
class ThreadServices;  // thread_services.h
}  // namespace connector::fcgi

namespace connector::fcgi {

class WorkerPool {
 public:
  // `slot` and `control`: the process's slots of the scoreboard and of the pool's shared state.
  WorkerPool(int listen_fd, const config::Config& config, metrics::ProcessSlot& slot,
             pool::ProcessControl& control, const util::AccessLog& access_log);
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
  // One thread's loop, the FastCGI exchange step by step: the next connection, its request
  // screened and read, the answer written, the connection kept or closed, the request counted.
  void serve();
  void watch(int fd, std::uint32_t events) const;  // adds fd to the process's set
  // The next connection with something to read; none once stopping and drained.
  UniqueFd next_connection();
  // A new connection, or a kept one whose next request arrived; none once stopping.
  UniqueFd wait_for_work();
  UniqueFd take_while_draining();  // a kept or pending connection's request; none when none
  // The connection an event of the process's set brings, if any (the stop signal brings none).
  UniqueFd on_event(const epoll_event& event);
  UniqueFd accept_connection();    // an accepted, checked connection; none if none
  void take_queued_connections();  // on stopping: the connections queued (see the .cpp)
  // Stopping, and no thread waits for work any more: the stop signal, which stays readable,
  // leaves the set, so that draining threads wait on it for requests only.
  void retire_stop_signal();
  // The connection when it holds a whole request the screen passed; otherwise it is now
  // pending_'s or closed, and none is returned.
  UniqueFd screened_whole(RequestScreen& screen, UniqueFd connection);
  // libfcgi reads the request from the connection; the connection back, or none when the
  // request did not arrive whole (then it is closed).
  UniqueFd read_request(LibfcgiRequest& request, UniqueFd connection);
  // Answers the request read on the connection, then keeps (parks) or closes the connection.
  void answer(ThreadServices& thread, LibfcgiRequest& request, UniqueFd connection);
  void count_request();
  void beat();  // this process is making progress (pool::ProcessControl::heartbeat_ms)

  int listen_fd_;           // the process's listening socket, borrowed: it outlives the pool
  const UniqueFd stop_fd_;  // an eventfd: readable once stopping
  // FCGI_WEB_SERVER_ADDRS, checked for TCP peers.
  const fastcgi::WebServerAddrs web_servers_;
  const std::chrono::milliseconds read_timeout_;
  const config::Config& config_;
  metrics::ProcessSlot& slot_;
  pool::ProcessControl& control_;
  const util::AccessLog& access_log_;
  db::RefreshedReference reference_;
  db::RefreshedSupply supply_;
  const std::vector<std::string> read_servers_;  // for the operations pages
  db::CircuitBreakers breakers_;
  db::ReplicaLagMonitor lag_monitor_;
  db::Refresher refresher_;
  db::ServerProber prober_;
  events::EventPublisher publisher_;
  // The process's one epoll set, which every thread waits on: the listening socket (with
  // EPOLLEXCLUSIVE: a new connection wakes one thread of one process), the stop eventfd (which
  // wakes them all), the kept connections, each armed once (kept_), the pending requests that
  // became whole and the kept connections' sweep timer.
  const UniqueFd epoll_fd_;
  KeptConnections kept_;
  PendingRequests pending_;  // connections whose request is not whole yet
  std::atomic<bool> stopping_{false};
  std::atomic<unsigned> waiting_{0};  // threads in wait_for_work(): see retire_stop_signal()
  std::atomic<bool> recycle_due_{false};
  std::atomic<std::uint64_t> served_{0};
  std::vector<std::thread> threads_;
};

}  // namespace connector::fcgi
