#include "worker_pool.h"

#include <fcgiapp.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "answer_log.h"
#include "api/router.h"
#include "db/connection.h"
#include "libfcgi_request.h"
#include "metrics/scoreboard.h"
#include "pending_requests.h"
#include "pool/shared_state.h"
#include "request_screen.h"
#include "stdout_records.h"
#include "thread_services.h"
#include "util/clock.h"
#include "util/log.h"
#include "util/log_throttle.h"

namespace connector::fcgi {
namespace {

using Clock = std::chrono::steady_clock;

fastcgi::FcgiLimits fcgi_limits(const config::Config& config) {
  return {.max_params_bytes = config.worker.fcgi_max_params_bytes};
}

util::LogThrottle refusal_lines(std::chrono::seconds(10));
util::LogThrottle accept_error_lines(std::chrono::seconds(10));

// Raises the pool-wide high-water mark of busy threads.
void note_active(metrics::Scoreboard& board) {
  const std::uint32_t now = board.active_threads();
  std::uint32_t seen = board.max_active.load(std::memory_order_relaxed);
  while (now > seen && !board.max_active.compare_exchange_weak(seen, now)) {
  }
}

}  // namespace

WorkerPool::WorkerPool(int listen_fd, const config::Config& config, metrics::ProcessSlot& slot,
                       pool::ProcessControl& control, const util::AccessLog& access_log)
    : listen_fd_(listen_fd),
      stop_fd_(checked_fd(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK), "eventfd")),
      web_servers_(fastcgi::WebServerAddrs::from_environment()),
      read_timeout_(config.worker.fcgi_read_timeout_ms),
      config_(config),
      slot_(slot),
      control_(control),
      access_log_(access_log),
      reference_(db::refresh_interval(config)),
      supply_(db::refresh_interval(config)),
      read_servers_(db::read_server_addresses(config.db)),
      breakers_(&slot.breakers_open),
      lag_monitor_(config, breakers_, pool::shared_state()),
      refresher_(config, reference_, supply_, breakers_, slot.refreshed_loads),
      prober_(config, breakers_),
      publisher_(config, breakers_, reference_, pool::shared_state().events,
                 metrics::scoreboard().events),
      epoll_fd_(checked_fd(::epoll_create1(EPOLL_CLOEXEC), "epoll_create1")),
      kept_(epoll_fd_.get(), read_timeout_),
      pending_(fcgi_limits(config), read_timeout_, slot.pending_requests) {
  watch(listen_fd_, EPOLLIN | EPOLLEXCLUSIVE);
  watch(stop_fd_.get(), EPOLLIN);
  watch(pending_.ready_fd(), EPOLLIN);
}

WorkerPool::~WorkerPool() {
  request_stop();
  join();
  refresher_.stop();
  prober_.stop();
  publisher_.stop();
  lag_monitor_.stop();
}

void WorkerPool::start() {
  // Replicas measured first: the first refreshed copies come from one in rotation.
  lag_monitor_.start();
  refresher_.start();
  prober_.start();
  publisher_.start();
  pending_.start();
  slot_.threads.store(config_.worker.threads);
  for (unsigned i = 0; i < config_.worker.threads; ++i) {
    threads_.emplace_back([this] {
      ::pthread_setname_np(::pthread_self(), "pool");  // for `top -H` and test_request_cost
      serve();
    });
  }
}

void WorkerPool::request_stop() {
  if (stopping_.exchange(true)) return;
  // No new connection for this process (the others, or its replacement, take them).
  ::epoll_ctl(epoll_fd_.get(), EPOLL_CTL_DEL, listen_fd_, nullptr);
  take_queued_connections();
  const std::uint64_t one = 1;
  [[maybe_unused]] const auto written = ::write(stop_fd_.get(), &one, sizeof one);
}

// EPOLLEXCLUSIVE wakes one process for a new connection. One that arrived just before the
// EPOLL_CTL_DEL above may have woken this process alone, and the removal drops that wake-up: no
// other process hears of the connection until the next one arrives (a request unanswered for
// nginx's whole read timeout after a reload, under load). So a stopping process takes what is
// queued once it has left the socket, and serves it while it drains (through pending_, which
// hands a whole request to a thread); what arrives later wakes the others. Bounded by the
// backlog: a queue that refills as fast as it is taken is theirs to serve.
void WorkerPool::take_queued_connections() {
  pollfd listening{listen_fd_, POLLIN, 0};
  for (unsigned taken = 0; taken < config_.worker.listen_backlog; ++taken) {
    if (::poll(&listening, 1, 0) != 1 || (listening.revents & POLLIN) == 0) return;
    UniqueFd connection = accept_connection();
    if (!connection) return;  // taken by another process, refused, or out of descriptors
    pending_.add(std::move(connection), Clock::now() + read_timeout_);
  }
}

void WorkerPool::join() {
  for (auto& thread : threads_) thread.join();
  threads_.clear();
}

void WorkerPool::beat() {
  control_.heartbeat_ms.store(
      std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now().time_since_epoch())
          .count(),
      std::memory_order_relaxed);
}

UniqueFd WorkerPool::next_connection() {
  if (!stopping_) {
    if (auto connection = wait_for_work()) return connection;
  }
  // Stopping: every free thread helps drain the kept connections (kept_connections.h), then
  // ends. A request still arriving is waited for too, within its read deadline.
  for (;;) {
    kept_.begin_drain();
    if (kept_.empty() && pending_.empty()) return {};
    if (auto connection = take_while_draining()) return connection;
  }
}

UniqueFd WorkerPool::take_while_draining() {
  UniqueFd connection = pending_.take();
  if (!connection) {
    epoll_event event{};
    if (::epoll_wait(epoll_fd_.get(), &event, 1, KeptConnections::kDrainWaitMs) == 1) {
      if (event.data.u64 == static_cast<std::uint64_t>(stop_fd_.get())) {
        retire_stop_signal();
      } else {
        connection = on_event(event);
      }
    }
  }
  kept_.close_idle();
  return connection;
}

// The stop eventfd stays readable (level-triggered): it wakes every waiting thread in turn; once
// none waits for work it would only keep draining threads awake. A thread counts itself in
// waiting_ before it reads stopping_, so none can sleep on the set after this looked.
void WorkerPool::retire_stop_signal() {
  if (waiting_.load() == 0) {
    ::epoll_ctl(epoll_fd_.get(), EPOLL_CTL_DEL, stop_fd_.get(), nullptr);
  } else {
    std::this_thread::yield();  // a woken thread is on its way out of wait_for_work()
  }
}

UniqueFd WorkerPool::wait_for_work() {
  // An idle thread wakes once a second to beat: the master feeds systemd's watchdog only while
  // every process beats (master.h).
  constexpr int kHeartbeatMs = 1000;
  epoll_event event{};
  for (;;) {
    waiting_.fetch_add(1);
    if (stopping_) break;
    const int ready = ::epoll_wait(epoll_fd_.get(), &event, 1, kHeartbeatMs);
    waiting_.fetch_sub(1);
    beat();
    if (ready < 0 && errno != EINTR) {
      util::log_warning("epoll_wait failed; retrying");
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    if (ready != 1) continue;
    if (auto connection = on_event(event)) return connection;
  }
  waiting_.fetch_sub(1);
  return {};
}

UniqueFd WorkerPool::on_event(const epoll_event& event) {
  const std::uint64_t data = event.data.u64;
  if (KeptConnections::is_token(data)) return kept_.take(data);
  const auto fd = static_cast<int>(data);
  if (fd == pending_.ready_fd()) return pending_.take();
  if (fd == kept_.timer_fd()) {
    kept_.on_timer();
  } else if (fd == listen_fd_) {
    if (event.events & EPOLLIN) return accept_connection();
    // EPOLLERR/EPOLLHUP on the listening socket: never spin on a broken socket.
    util::log_warning("the listening socket reports an error; retrying");
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return {};  // the stop eventfd: the caller looks at stopping_
}

UniqueFd WorkerPool::accept_connection() {
  sockaddr_storage peer{};
  socklen_t length = sizeof peer;
  UniqueFd connection(
      ::accept4(listen_fd_, reinterpret_cast<sockaddr*>(&peer), &length, SOCK_CLOEXEC));
  if (!connection) {
    // EAGAIN: another thread or process took it; EINTR, ECONNABORTED: nothing to serve. Out of
    // descriptors or memory: the connection stays queued and epoll reports it again at once, so
    // pause rather than spin.
    if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
      if (accept_error_lines.due()) {
        util::log_warning("accept failed: " +
                          std::error_code(errno, std::generic_category()).message() + "; retrying");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return {};
  }
  const auto* address = reinterpret_cast<const sockaddr*>(&peer);
  if (!web_servers_.allows(address, length)) {
    // libfcgi's rule for FCGI_WEB_SERVER_ADDRS: closed without a word.
    if (refusal_lines.due()) {
      util::log_warning("refused a FastCGI connection from " +
                        fastcgi::describe_peer(address, length) +
                        ": not in FCGI_WEB_SERVER_ADDRS (" + web_servers_.describe() + ")");
    }
    return {};
  }
  set_send_timeout(connection.get(), read_timeout_);  // a whole answer's deadline
  // The screen's backstop (request_screen.h): libfcgi reads only a whole, queued request; were
  // the screen wrong, a read waiting that long for a byte would fail and libfcgi close it.
  set_receive_timeout(connection.get(), read_timeout_);
  if (peer.ss_family == AF_INET || peer.ss_family == AF_INET6) {
    const int on = 1;  // as libfcgi does: the answer goes out in few writes, no Nagle delay
    ::setsockopt(connection.get(), IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
  }
  return connection;
}

void WorkerPool::watch(int fd, std::uint32_t events) const {
  epoll_event event{};
  event.events = events;
  event.data.u64 = static_cast<std::uint32_t>(fd);
  if (::epoll_ctl(epoll_fd_.get(), EPOLL_CTL_ADD, fd, &event) != 0) {
    throw std::runtime_error("epoll_ctl failed");
  }
}

void WorkerPool::count_request() {
  const auto max_requests = config_.worker.max_requests;
  if (served_.fetch_add(1) + 1 == max_requests && max_requests != 0) {
    recycle_due_ = true;
    control_.retiring.store(1);  // the master starts the replacement while this one drains
    request_stop();
  }
}

// libfcgi reads only a whole request the screen passed. One not whole yet waits in pending_
// (no thread held), anything else is closed here.
UniqueFd WorkerPool::screened_whole(RequestScreen& screen, UniqueFd connection) {
  const Screened screened = screen.look(connection.get());
  switch (screened.outcome) {
    case Screened::Outcome::kRequest:
      return connection;
    case Screened::Outcome::kIncomplete:
      pending_.add(std::move(connection), Clock::now() + read_timeout_);
      return {};
    case Screened::Outcome::kRejected:
      note_rejection(screened, read_timeout_);
      return {};
    case Screened::Outcome::kClosed:
      return {};
  }
  return {};
}

// libfcgi gets no listening socket (-1): this pool accepts every connection (with the
// FCGI_WEB_SERVER_ADDRS check and timeouts), or takes a kept one whose next request arrived,
// and hands it over open in request.ipcFd, which FCGX_Accept_r then reads the request from.
// When that read fails (the peer closed, timed out, or broke the protocol), FCGX_Accept_r
// closes the connection and tries to accept a new one on -1, which fails at once (EBADF): it
// returns < 0 without blocking or spinning, and libfcgi never accepts a connection itself.
// Once the request is read, the connection is ours again (request.ipcFd -1): libfcgi never
// closes it, and FCGX_Finish_r only frees the request.
UniqueFd WorkerPool::read_request(LibfcgiRequest& libfcgi, UniqueFd connection) {
  FCGX_Request& request = libfcgi.get();
  request.ipcFd = connection.release();
  // FCGX_Accept_r starts by finishing the previous request, which closes the connection unless
  // it is kept: so is this one, until its FCGI_BEGIN_REQUEST says (FCGI_KEEP_CONN).
  request.keepConnection = 1;
  // Detached: when libfcgi closes a connection itself (its read failed), it is a plain close(),
  // not OS_Close's shutdown and read until the peer stops sending (nor its select() on a
  // descriptor number past FD_SETSIZE).
  request.detached = 1;
  const int accepted = FCGX_Accept_r(&request);
  // The request's body too (nginx sends at least the empty STDIN record that ends it): libfcgi
  // stops reading after the parameters, and whatever it left unread on a kept connection would
  // be read as the start of the next request.
  if (accepted >= 0) libfcgi.skip_stdin();
  if (accepted < 0) return {};  // libfcgi closed it
  connection.reset(std::exchange(request.ipcFd, -1));
  if (FCGX_GetError(request.in) != 0) {  // the request never arrived whole: not answered
    libfcgi.mark_written();              // nothing is written to a peer that broke off
    FCGX_Finish_r(&request);
    return {};
  }
  return connection;
}

void WorkerPool::answer(ThreadServices& thread, LibfcgiRequest& libfcgi, UniqueFd connection) {
  FCGX_Request& request = libfcgi.get();
  const auto started = Clock::now();
  const auto deadline = started + std::chrono::milliseconds(config_.worker.request_timeout_ms);
  thread.set_deadline(deadline);
  auto& board = metrics::scoreboard();
  slot_.active.fetch_add(1);
  board.accepted.fetch_add(1, std::memory_order_relaxed);
  note_active(board);
  const LibfcgiRequest::Params params = libfcgi.params();
  // Copied: the parameters are freed by FCGX_Finish_r, before the access log line is written.
  const std::string method(params.method);
  const auto response = thread.router().handle({
      .method = method,
      .path = params.path(),
      .query_string = params.query_string,
      .if_none_match = params.if_none_match,
      .request_id = params.request_id,
      .deadline = deadline,
      .last_event_id = params.last_event_id,
      .if_modified_since = params.if_modified_since,
      .accept = params.accept,
      .upgrade = params.upgrade,
  });
  const bool written = write_response(connection.get(), request.requestId, response.head,
                                      response.body, read_timeout_);
  const bool keep = written && request.keepConnection;
  libfcgi.mark_written();
  FCGX_Finish_r(&request);
  // Kept open (FCGI_KEEP_CONN): parked until its next request. Otherwise closed here, at once
  // (libfcgi's close, OS_Close, reads until the peer closes, which a peer that keeps sending
  // would make last for ever).
  if (keep) {
    kept_.park(std::move(connection));
  } else {
    connection.reset();
  }

  const auto duration_us = static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - started).count());
  const bool slow = duration_us >= std::uint64_t{config_.worker.slow_request_ms} * 1000;
  board.record(response.endpoint_index, response.status, duration_us, slow);
  slot_.active.fetch_sub(1);
  slot_.requests.fetch_add(1, std::memory_order_relaxed);
  // The pid as the slot holds it: getpid() is a system call per answer.
  log_access(access_log_, response, method, duration_us, slow, slot_.pid.load());
}

void WorkerPool::serve() {
  ThreadServices thread(config_, breakers_, reference_, supply_, read_servers_);
  LibfcgiRequest request;
  RequestScreen screen(fcgi_limits(config_));
  while (UniqueFd connection = next_connection()) {
    connection = screened_whole(screen, std::move(connection));
    if (connection) connection = read_request(request, std::move(connection));
    if (!connection) continue;
    answer(thread, request, std::move(connection));
    count_request();
  }
}

}  // namespace connector::fcgi
