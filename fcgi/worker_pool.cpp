#include "worker_pool.h"

#include <fcgiapp.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "api/router.h"
#include "db/database.h"
#include "metrics/scoreboard.h"
#include "pending_requests.h"
#include "request_screen.h"
#include "stdout_records.h"
#include "util/clock.h"
#include "util/log.h"

namespace connector::fcgi {
namespace {

using Clock = std::chrono::steady_clock;

std::string_view param(const FCGX_Request& request, const char* name) {
  const char* value = FCGX_GetParam(name, request.envp);
  return value == nullptr ? std::string_view{} : std::string_view{value};
}

// nginx's $document_uri is the decoded, normalised path; REQUEST_URI is the fallback.
std::string_view request_path(const FCGX_Request& request) {
  std::string_view path = param(request, "DOCUMENT_URI");
  if (path.empty()) {
    path = param(request, "REQUEST_URI");
    path = path.substr(0, path.find('?'));
  }
  return path;
}

net::FcgiLimits fcgi_limits(const config::Config& config) {
  return {.max_params_bytes = config.worker.fcgi_max_params_bytes};
}

std::atomic<std::int64_t> last_refusal_log_s{-1000};
std::atomic<std::int64_t> last_accept_error_log_s{-1000};

// The response and the records that end the request went out in write_response(): libfcgi's
// output streams are marked closed (fields of FCGX_Stream, public in fcgiapp.h), so that
// FCGX_Finish_r does not write the end records again.
void mark_written(FCGX_Request& request) {
  for (FCGX_Stream* stream : {request.out, request.err}) {
    stream->isClosed = 1;
    stream->wasFCloseCalled = 1;
  }
}

// Reads the request's STDIN stream to its end; the GET and HEAD requests served here carry
// no body worth keeping.
void skip_stdin(FCGX_Request& request) {
  char discard[1024];
  while (FCGX_GetStr(discard, sizeof discard, request.in) > 0) {
  }
}

// Raises the pool-wide high-water mark of busy threads.
void note_active(metrics::Scoreboard& board) {
  const std::uint32_t now = board.active_threads();
  std::uint32_t seen = board.max_active.load(std::memory_order_relaxed);
  while (now > seen && !board.max_active.compare_exchange_weak(seen, now)) {
  }
}

}  // namespace

WorkerPool::WorkerPool(int listen_fd, const config::Config& config, metrics::ProcessSlot& slot,
                       const util::AccessLog& access_log)
    : listen_fd_(listen_fd),
      stop_fd_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)),
      web_servers_(net::WebServerAddrs::from_environment()),
      read_timeout_(config.worker.fcgi_read_timeout_ms),
      read_deadlines_(config.worker.threads, read_timeout_),
      config_(config),
      slot_(slot),
      access_log_(access_log),
      reference_(db::refresh_interval(config)),
      supply_(db::refresh_interval(config)),
      read_servers_(db::read_server_addresses(config.db)),
      breakers_(&slot.breakers_open),
      lag_monitor_(config, breakers_, metrics::scoreboard()),
      refresher_(config, reference_, supply_, breakers_, slot.snapshots),
      prober_(config, breakers_),
      kept_(read_timeout_),
      pending_(fcgi_limits(config), read_timeout_, slot.pending_requests),
      epoll_fd_(make_epoll()) {}

WorkerPool::~WorkerPool() {
  request_stop();
  join();
  read_deadlines_.stop();
  refresher_.stop();
  prober_.stop();
  lag_monitor_.stop();
  ::close(epoll_fd_);
  ::close(stop_fd_);
}

void WorkerPool::start() {
  // Replicas measured first: the first snapshots come from one in rotation.
  lag_monitor_.start();
  refresher_.start();
  prober_.start();
  read_deadlines_.start();
  pending_.start();
  slot_.threads.store(config_.worker.threads);
  for (unsigned i = 0; i < config_.worker.threads; ++i) {
    threads_.emplace_back([this, i] { serve(i); });
  }
}

void WorkerPool::request_stop() {
  if (stopping_.exchange(true)) return;
  const std::uint64_t one = 1;
  [[maybe_unused]] const auto written = ::write(stop_fd_, &one, sizeof one);
}

void WorkerPool::join() {
  for (auto& thread : threads_) thread.join();
  threads_.clear();
}

void WorkerPool::beat() {
  slot_.heartbeat_ms.store(
      std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now().time_since_epoch())
          .count(),
      std::memory_order_relaxed);
}

int WorkerPool::wait_for_work() {
  // An idle thread wakes once a second to beat: the master feeds systemd's watchdog only while
  // every process beats (master.h).
  constexpr int kHeartbeatMs = 1000;
  epoll_event event{};
  while (!stopping_) {
    const int ready = ::epoll_wait(epoll_fd_, &event, 1, kHeartbeatMs);
    beat();
    if (ready < 0) {
      if (errno == EINTR) continue;
      util::log_warning("epoll_wait failed; retrying");
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      continue;
    }
    if (ready == 0) continue;
    if (event.data.fd == kept_.fd()) {
      const int fd = kept_.take_ready(0);
      if (fd >= 0) return fd;
      continue;  // another thread took it first
    }
    if (event.data.fd == pending_.ready_fd()) {
      const int fd = pending_.take();
      if (fd >= 0) return fd;
      continue;  // another thread took it first
    }
    if (event.data.fd == kept_.timer_fd()) {
      kept_.on_timer();
      continue;
    }
    if (event.data.fd == stop_fd_) return -1;
    if (event.events & EPOLLIN) {
      const int fd = accept_connection();
      if (fd >= 0) return fd;
      continue;
    }
    // EPOLLERR/EPOLLHUP on the listening socket: never spin on a broken socket.
    util::log_warning("the listening socket reports an error; retrying");
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return -1;
}

int WorkerPool::accept_connection() {
  sockaddr_storage peer{};
  socklen_t length = sizeof peer;
  const int fd = ::accept4(listen_fd_, reinterpret_cast<sockaddr*>(&peer), &length, SOCK_CLOEXEC);
  if (fd < 0) {
    // EAGAIN: another thread or process took it; EINTR, ECONNABORTED: nothing to serve. Out of
    // descriptors or memory: the connection stays queued and epoll reports it again at once, so
    // pause rather than spin.
    if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
      if (util::log_due(last_accept_error_log_s, std::chrono::seconds(10))) {
        util::log_warning("accept failed: " +
                          std::error_code(errno, std::generic_category()).message() + "; retrying");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return -1;
  }
  const auto* address = reinterpret_cast<const sockaddr*>(&peer);
  if (!web_servers_.allows(address, length)) {
    // libfcgi's rule for FCGI_WEB_SERVER_ADDRS: closed without a word.
    if (util::log_due(last_refusal_log_s, std::chrono::seconds(10))) {
      util::log_warning("refused a FastCGI connection from " + net::describe_peer(address, length) +
                        ": not in FCGI_WEB_SERVER_ADDRS (" + web_servers_.describe() + ")");
    }
    ::close(fd);
    return -1;
  }
  set_send_timeout(fd, read_timeout_);  // a whole answer's deadline: write_response()
  if (peer.ss_family == AF_INET || peer.ss_family == AF_INET6) {
    const int on = 1;  // as libfcgi does: the answer goes out in few writes, no Nagle delay
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
  }
  return fd;
}

// One epoll set per process: the shared listening socket with EPOLLEXCLUSIVE (a new connection
// wakes one waiting thread of one process, not the whole pool), the stop eventfd, which wakes
// them all, the set of kept connections parked between their requests, and the connections
// whose request has become whole while they waited in pending_.
int WorkerPool::make_epoll() const {
  if (stop_fd_ < 0) throw std::runtime_error("eventfd failed");
  const int epoll_fd = ::epoll_create1(EPOLL_CLOEXEC);
  if (epoll_fd < 0) throw std::runtime_error("epoll_create1 failed");
  epoll_event listen_event{};
  listen_event.events = EPOLLIN | EPOLLEXCLUSIVE;
  listen_event.data.fd = listen_fd_;
  epoll_event stop_event{};
  stop_event.events = EPOLLIN;
  stop_event.data.fd = stop_fd_;
  epoll_event kept_event{};
  kept_event.events = EPOLLIN;
  kept_event.data.fd = kept_.fd();
  epoll_event pending_event{};
  pending_event.events = EPOLLIN;
  pending_event.data.fd = pending_.ready_fd();
  epoll_event timer_event{};
  timer_event.events = EPOLLIN | EPOLLET;  // one thread per expiration
  timer_event.data.fd = kept_.timer_fd();
  if (::epoll_ctl(epoll_fd, EPOLL_CTL_ADD, listen_fd_, &listen_event) != 0 ||
      ::epoll_ctl(epoll_fd, EPOLL_CTL_ADD, stop_fd_, &stop_event) != 0 ||
      ::epoll_ctl(epoll_fd, EPOLL_CTL_ADD, kept_.fd(), &kept_event) != 0 ||
      ::epoll_ctl(epoll_fd, EPOLL_CTL_ADD, pending_.ready_fd(), &pending_event) != 0 ||
      ::epoll_ctl(epoll_fd, EPOLL_CTL_ADD, kept_.timer_fd(), &timer_event) != 0) {
    ::close(epoll_fd);
    throw std::runtime_error("epoll_ctl failed");
  }
  return epoll_fd;
}

void WorkerPool::count_request() {
  const auto max_requests = config_.worker.max_requests;
  if (served_.fetch_add(1) + 1 == max_requests && max_requests != 0) {
    recycle_due_ = true;
    slot_.retiring.store(1);  // the master starts the replacement while this one drains
    request_stop();
  }
}

// libfcgi reads only a whole request the screen passed. One not whole yet waits in pending_
// (no thread held), anything else is closed here.
bool WorkerPool::screened_whole(RequestScreen& screen, int fd) {
  const Screened screened = screen.look(fd);
  switch (screened.outcome) {
    case Screened::Outcome::kRequest:
      return true;
    case Screened::Outcome::kIncomplete:
      pending_.add(fd, Clock::now() + read_timeout_);
      return false;
    case Screened::Outcome::kRejected:
      note_rejection(screened, read_timeout_);
      break;
    case Screened::Outcome::kClosed:
      break;
  }
  ::close(fd);
  return false;
}

void WorkerPool::serve(unsigned slot) {
  db::DriverThreadScope driver_thread;
  const unsigned budget_ms = config_.worker.request_timeout_ms;
  db::Database reader(breakers_.attach(db::read_targets(config_.db)),
                      db::connection_options(config_.db, budget_ms));
  db::Database writer(breakers_.attach(db::write_targets(config_.db)),
                      db::connection_options(config_.db, budget_ms));
  db::MariaDbHistoryStore history(reader);
  db::NewRowBudget new_rows(config_.worker.new_accounts_per_minute, db::new_row_window());
  db::MariaDbDepositAccountStore accounts(reader, writer, new_rows);
  db::MariaDbReadinessCheck readiness(reader);
  api::Router router({history, accounts, readiness, reference_, supply_, read_servers_});
  auto& board = metrics::scoreboard();
  const int pid = static_cast<int>(::getpid());
  FCGX_Request request;
  // libfcgi gets no listening socket (-1): this loop accepts every connection (with the
  // FCGI_WEB_SERVER_ADDRS check and timeouts), or takes a kept one whose next request arrived,
  // and hands it over open in request.ipcFd, which FCGX_Accept_r then reads the request from.
  // When that read fails (the peer closed, timed out, or broke the protocol), FCGX_Accept_r
  // closes the connection and tries to accept a new one on -1, which fails at once (EBADF): it
  // returns < 0 without blocking or spinning, and libfcgi never accepts a connection itself.
  FCGX_InitRequest(&request, -1, 0);
  RequestScreen screen(fcgi_limits(config_));
  for (;;) {
    int fd = stopping_ ? -1 : wait_for_work();  // -1: stopping
    if (fd < 0) {
      // Every free thread helps drain the kept connections (kept_connections.h), then ends.
      // A request still arriving is waited for too, within its read deadline.
      kept_.begin_drain();
      if (kept_.empty() && pending_.empty()) break;
      fd = pending_.take();
      if (fd < 0) fd = kept_.take_ready(KeptConnections::kDrainWaitMs);
      kept_.close_idle();
      if (fd < 0) continue;
    }
    if (!screened_whole(screen, fd)) continue;
    request.ipcFd = fd;
    // FCGX_Accept_r starts by finishing the previous request, which closes the connection
    // unless it is kept: so is this one, until its FCGI_BEGIN_REQUEST says (FCGI_KEEP_CONN).
    request.keepConnection = 1;
    // Detached: when libfcgi closes a connection itself (its read failed), it is a plain
    // close(), not OS_Close's shutdown and read until the peer stops sending (nor its select()
    // on a descriptor number past FD_SETSIZE).
    request.detached = 1;
    if (!read_deadlines_.reading(slot, request.ipcFd)) {
      ::close(fd);  // no bound on its read possible: not served (closed here, not by libfcgi)
      request.ipcFd = -1;
      continue;
    }
    const int accepted = FCGX_Accept_r(&request);
    // The request's body too (nginx sends at least the empty STDIN record that ends it):
    // libfcgi stops reading after the parameters, and whatever it left unread on a kept
    // connection would be read as the start of the next request.
    if (accepted >= 0) skip_stdin(request);
    read_deadlines_.done(slot);
    if (accepted < 0) continue;
    if (FCGX_GetError(request.in) != 0) {  // the request never arrived whole: not answered
      ::close(request.ipcFd);              // nothing is written to a peer that broke off
      request.ipcFd = -1;
      mark_written(request);
      FCGX_Finish_r(&request);
      continue;
    }
    const auto started = Clock::now();
    // One deadline for all the request's database work, on both connections.
    const auto deadline = started + std::chrono::milliseconds(budget_ms);
    reader.set_deadline(deadline);
    writer.set_deadline(deadline);
    slot_.active.fetch_add(1);
    board.accepted.fetch_add(1, std::memory_order_relaxed);
    note_active(board);

    // Copied: the parameters are freed by FCGX_Finish_r, before the access log line is written.
    const std::string method(param(request, "REQUEST_METHOD"));
    const auto response = router.handle({
        .method = method,
        .path = request_path(request),
        .query_string = param(request, "QUERY_STRING"),
        .if_none_match = param(request, "HTTP_IF_NONE_MATCH"),
        .request_id = param(request, "REQUEST_ID"),
        .deadline = deadline,
    });
    const bool written = write_response(request.ipcFd, request.requestId, response.head,
                                        response.body, read_timeout_);
    if (!written || !request.keepConnection) {
      // Closed here, at once: libfcgi's close (OS_Close) reads until the peer closes, which a
      // peer that keeps sending would make last for ever.
      ::close(request.ipcFd);
      request.ipcFd = -1;
    }
    mark_written(request);
    FCGX_Finish_r(&request);
    if (request.ipcFd >= 0) {  // kept open (FCGI_KEEP_CONN): parked until its next request
      kept_.park(request.ipcFd);
      request.ipcFd = -1;
    }

    const auto duration_us = static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - started).count());
    const bool slow = duration_us >= std::uint64_t{config_.worker.slow_request_ms} * 1000;
    board.record(response.endpoint_index, response.status, duration_us, slow);
    slot_.active.fetch_sub(1);
    slot_.requests.fetch_add(1, std::memory_order_relaxed);
    const util::AccessRecord record{util::unix_ms_now(),
                                    response.request_id,
                                    method,
                                    api::kEndpointLabels[response.endpoint_index],
                                    response.status,
                                    duration_us,
                                    response.body.size(),
                                    pid};
    // Health and monitoring probes (a balancer's every few seconds) stay out of the access log
    // unless they fail or are slow; /metrics and /status count them.
    const bool probe = response.endpoint_index == api::kOpsEndpoint && response.status < 500;
    if (slow || (access_log_.enabled() && !probe)) {
      const std::string line = util::format_access_line(record);
      if (slow) util::log_warning("slow request: " + line.substr(0, line.size() - 1));
      access_log_.write(line);
    }
    count_request();
  }
  FCGX_Free(&request, /*close=*/1);
}

}  // namespace connector::fcgi
