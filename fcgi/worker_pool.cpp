#include "worker_pool.h"

#include <fcgiapp.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <stdexcept>
#include <string_view>

#include "api/router.h"
#include "db/database.h"
#include "metrics/scoreboard.h"
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

void put(FCGX_Stream* out, std::string_view bytes) {
  if (!bytes.empty()) FCGX_PutStr(bytes.data(), static_cast<int>(bytes.size()), out);
}

std::int64_t unix_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
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
      config_(config),
      slot_(slot),
      access_log_(access_log),
      reference_(db::refresh_interval(config)),
      supply_(db::refresh_interval(config)),
      refresher_(config, reference_, supply_, breakers_),
      prober_(config, breakers_) {
  if (stop_fd_ < 0) throw std::runtime_error("eventfd failed");
}

WorkerPool::~WorkerPool() {
  request_stop();
  join();
  refresher_.stop();
  prober_.stop();
  ::close(stop_fd_);
}

void WorkerPool::start() {
  refresher_.start();
  prober_.start();
  slot_.threads.store(config_.worker.threads);
  for (unsigned i = 0; i < config_.worker.threads; ++i) threads_.emplace_back([this] { serve(); });
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

bool WorkerPool::wait_for_connection(int epoll_fd) {
  epoll_event event{};
  while (!stopping_) {
    const int ready = ::epoll_wait(epoll_fd, &event, 1, -1);
    if (ready < 0) {
      if (errno == EINTR) continue;
      util::log_warning("epoll_wait failed; retrying");
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      continue;
    }
    if (ready == 0) continue;
    if (event.data.fd == stop_fd_) return false;
    if (event.events & EPOLLIN) return true;
    // EPOLLERR/EPOLLHUP on the listening socket: never spin on a broken socket.
    util::log_warning("the listening socket reports an error; retrying");
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

bool WorkerPool::wait_for_next_request(int connection_fd) {
  pollfd fds[2] = {{connection_fd, POLLIN, 0}, {stop_fd_, POLLIN, 0}};
  while (!stopping_) {
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    if (fds[1].revents != 0) return false;
    if (fds[0].revents != 0) return true;  // data, or the close FCGX_Accept_r will notice
  }
  return false;
}

// Each thread waits in its own epoll set holding the shared listening socket with
// EPOLLEXCLUSIVE, so a new connection wakes one waiting thread, not all of them (a plain poll()
// by every thread would wake the whole pool for each request), and the stop eventfd, which wakes
// them all.
int WorkerPool::make_epoll() const {
  const int epoll_fd = ::epoll_create1(EPOLL_CLOEXEC);
  if (epoll_fd < 0) throw std::runtime_error("epoll_create1 failed");
  epoll_event listen_event{};
  listen_event.events = EPOLLIN | EPOLLEXCLUSIVE;
  listen_event.data.fd = listen_fd_;
  epoll_event stop_event{};
  stop_event.events = EPOLLIN;
  stop_event.data.fd = stop_fd_;
  if (::epoll_ctl(epoll_fd, EPOLL_CTL_ADD, listen_fd_, &listen_event) != 0 ||
      ::epoll_ctl(epoll_fd, EPOLL_CTL_ADD, stop_fd_, &stop_event) != 0) {
    ::close(epoll_fd);
    throw std::runtime_error("epoll_ctl failed");
  }
  return epoll_fd;
}

void WorkerPool::count_request() {
  const auto max_requests = config_.worker.max_requests;
  if (served_.fetch_add(1) + 1 == max_requests && max_requests != 0) {
    recycle_due_ = true;
    request_stop();
  }
}

void WorkerPool::serve() {
  db::DriverThreadScope driver_thread;
  const unsigned budget_ms = config_.worker.request_timeout_ms;
  db::Database reader(breakers_.attach(db::read_targets(config_.db)),
                      db::connection_options(config_.db, budget_ms));
  db::Database writer(breakers_.attach(db::write_targets(config_.db)),
                      db::connection_options(config_.db, budget_ms));
  db::MariaDbHistoryStore history(reader);
  db::MariaDbDepositAccountStore accounts(writer);
  db::MariaDbReadinessCheck readiness(reader);
  api::Router router({history, accounts, readiness, reference_, supply_});
  auto& board = metrics::scoreboard();
  const int pid = static_cast<int>(::getpid());
  const int epoll_fd = make_epoll();
  FCGX_Request request;
  FCGX_InitRequest(&request, listen_fd_, 0);
  for (;;) {
    // A connection nginx keeps open (fastcgi_keep_conn) carries the next request itself:
    // FCGX_Accept_r reads it without a new accept, so only an idle thread waits for one.
    // It still waits with the stop signal, so a drain never hangs on an idle kept connection.
    const bool kept_connection = request.ipcFd >= 0;
    if (kept_connection ? !wait_for_next_request(request.ipcFd) : !wait_for_connection(epoll_fd)) {
      break;
    }
    // Another thread or process may have taken the connection: the socket is non-blocking.
    if (FCGX_Accept_r(&request) < 0) continue;
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
    put(request.out, response.head);
    put(request.out, response.body);
    FCGX_Finish_r(&request);

    const auto duration_us = static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - started).count());
    const bool slow = duration_us >= std::uint64_t{config_.worker.slow_request_ms} * 1000;
    board.record(response.endpoint_index, response.status, duration_us, slow);
    slot_.active.fetch_sub(1);
    slot_.requests.fetch_add(1, std::memory_order_relaxed);
    const util::AccessRecord record{unix_ms(),
                                    response.request_id,
                                    method,
                                    metrics::kEndpointLabels[response.endpoint_index],
                                    response.status,
                                    duration_us,
                                    response.body.size(),
                                    pid};
    if (slow || access_log_.enabled()) {
      const std::string line = util::format_access_line(record);
      if (slow) util::log_warning("slow request: " + line.substr(0, line.size() - 1));
      access_log_.write(line);
    }
    count_request();
  }
  FCGX_Free(&request, /*close=*/1);  // also closes a connection nginx kept open
  ::close(epoll_fd);
}

}  // namespace connector::fcgi
