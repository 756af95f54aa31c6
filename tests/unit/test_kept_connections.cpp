// fcgi::KeptConnections: connections nginx keeps open wait there between their requests,
// without a thread, in the epoll set the threads wait on; a thread takes one when its next
// request arrives, and only one thread is woken for it. The bookkeeping: each
// is handed out once, the idle ones and the ones nginx closed are closed by the sweep, a
// connection whose request arrived is never closed as idle, and parking stops at the cap and
// once draining. Driven over socket pairs.
#define BOOST_TEST_MODULE kept_connections
#include <poll.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <boost/test/unit_test.hpp>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "kept_connections.h"

using connector::fcgi::KeptConnections;
using connector::util::UniqueFd;

namespace {

constexpr std::chrono::milliseconds kIdleLimit{200};
constexpr int kWaitMs = 10000;  // the most any step below may take on a loaded machine

struct Connection {
  int worker = -1;  // the end the set gets (and closes)
  UniqueFd peer;    // nginx's end
  Connection() {
    int ends[2];
    BOOST_TEST_REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ends) == 0);
    worker = ends[0];
    peer.reset(ends[1]);
  }
  void send_request() const { BOOST_TEST_REQUIRE(::send(peer.get(), "r", 1, MSG_NOSIGNAL) == 1); }
  // True once the worker's end is closed: the peer reads end-of-file (or a reset).
  bool closed_by_worker(int wait_ms = kWaitMs) const {
    pollfd p{peer.get(), POLLIN, 0};
    if (::poll(&p, 1, wait_ms) != 1) return false;
    char byte;
    const ssize_t n = ::recv(peer.get(), &byte, 1, MSG_DONTWAIT | MSG_PEEK);
    return n == 0 || (n < 0 && errno == ECONNRESET);
  }
};

// The pool's epoll set, with the set of kept connections in it.
struct Pool {
  UniqueFd epoll{::epoll_create1(EPOLL_CLOEXEC)};
  KeptConnections kept;
  explicit Pool(std::chrono::milliseconds idle_limit) : kept(epoll.get(), idle_limit) {}

  // As a pool thread does: the next parked connection whose request arrived, waiting at most
  // `timeout_ms`; events of the sweep timer are passed over.
  UniqueFd take_ready(int timeout_ms) {
    epoll_event event{};
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    while (::epoll_wait(epoll.get(), &event, 1, timeout_ms) == 1) {
      if (KeptConnections::is_token(event.data.u64)) return kept.take(event.data.u64);
      timeout_ms = static_cast<int>(std::max<std::int64_t>(
          0, std::chrono::duration_cast<std::chrono::milliseconds>(deadline -
                                                                   std::chrono::steady_clock::now())
                 .count()));
    }
    return {};
  }
};

}  // namespace

BOOST_AUTO_TEST_CASE(a_parked_connection_is_taken_once_when_its_request_arrives) {
  Pool pool(kIdleLimit);
  auto& kept = pool.kept;
  const Connection c;
  kept.park(UniqueFd(c.worker));
  BOOST_TEST(!kept.empty());
  BOOST_TEST(!pool.take_ready(0));  // no request yet
  c.send_request();
  const UniqueFd taken = pool.take_ready(kWaitMs);
  BOOST_TEST(taken.get() == c.worker);
  BOOST_TEST(kept.empty());
  BOOST_TEST(!pool.take_ready(0));  // handed out once
  BOOST_TEST(!c.closed_by_worker(0));
}

BOOST_AUTO_TEST_CASE(a_connection_parked_again_is_watched_again) {
  Pool pool(kIdleLimit);
  auto& kept = pool.kept;
  const Connection c;
  kept.park(UniqueFd(c.worker));
  c.send_request();
  UniqueFd taken = pool.take_ready(kWaitMs);
  BOOST_TEST_REQUIRE(taken.get() == c.worker);
  char byte;
  BOOST_TEST_REQUIRE(::recv(taken.get(), &byte, 1, 0) == 1);  // the request, answered
  kept.park(std::move(taken));
  c.send_request();
  BOOST_TEST(pool.take_ready(kWaitMs).get() == c.worker);
}

BOOST_AUTO_TEST_CASE(idle_ones_are_closed_past_the_limit_and_waiting_requests_never) {
  Pool pool(kIdleLimit);
  auto& kept = pool.kept;
  const Connection idle, with_request;
  kept.park(UniqueFd(idle.worker));
  kept.park(UniqueFd(with_request.worker));
  kept.close_idle();  // not idle long enough yet
  BOOST_TEST(!idle.closed_by_worker(0));
  with_request.send_request();
  std::this_thread::sleep_for(kIdleLimit + std::chrono::milliseconds(50));
  kept.close_idle();
  BOOST_TEST(idle.closed_by_worker());
  BOOST_TEST(!with_request.closed_by_worker(0));
  BOOST_TEST(pool.take_ready(kWaitMs).get() == with_request.worker);
  BOOST_TEST(kept.empty());
}

BOOST_AUTO_TEST_CASE(one_nginx_closed_goes_at_the_next_sweep_whatever_its_age) {
  Pool pool(std::chrono::milliseconds(60'000));
  auto& kept = pool.kept;
  auto c = std::make_unique<Connection>();
  kept.park(UniqueFd(c->worker));
  c.reset();  // nginx closes its end
  kept.close_idle();
  BOOST_TEST(kept.empty());
}

BOOST_AUTO_TEST_CASE(past_the_cap_a_connection_is_closed_after_its_answer) {
  // Two descriptors per connection: past the common soft limit of 1024.
  rlimit limit{};
  BOOST_TEST_REQUIRE(::getrlimit(RLIMIT_NOFILE, &limit) == 0);
  limit.rlim_cur = std::max<rlim_t>(limit.rlim_cur, std::min<rlim_t>(limit.rlim_max, 4096));
  BOOST_TEST_REQUIRE(::setrlimit(RLIMIT_NOFILE, &limit) == 0);
  BOOST_TEST_REQUIRE(limit.rlim_cur > 2 * KeptConnections::kMaxParked + 16);
  Pool pool(std::chrono::milliseconds(60'000));
  auto& kept = pool.kept;
  std::vector<Connection> parked(KeptConnections::kMaxParked);
  for (const auto& c : parked) kept.park(UniqueFd(c.worker));
  const Connection one_more;
  kept.park(UniqueFd(one_more.worker));
  BOOST_TEST(one_more.closed_by_worker());
  BOOST_TEST(!parked.back().closed_by_worker(0));
}

BOOST_AUTO_TEST_CASE(draining_parks_nothing_and_gives_the_parked_a_short_time) {
  Pool pool(std::chrono::milliseconds(60'000));
  auto& kept = pool.kept;
  const Connection parked, after;
  kept.park(UniqueFd(parked.worker));
  kept.begin_drain();
  kept.park(UniqueFd(after.worker));
  BOOST_TEST(after.closed_by_worker());
  kept.close_idle();  // within kDrainIdle still
  BOOST_TEST(!parked.closed_by_worker(0));
  std::this_thread::sleep_for(KeptConnections::kDrainIdle + std::chrono::milliseconds(50));
  kept.close_idle();
  BOOST_TEST(parked.closed_by_worker());
  BOOST_TEST(kept.empty());
}

BOOST_AUTO_TEST_CASE(the_set_closes_what_is_still_parked_when_it_goes) {
  const Connection c;
  {
    Pool pool(kIdleLimit);
    auto& kept = pool.kept;
    kept.park(UniqueFd(c.worker));
  }
  BOOST_TEST(c.closed_by_worker());
}

BOOST_AUTO_TEST_CASE(a_request_wakes_one_of_the_waiting_threads) {
  // Four threads wait on the set, as a process's pool does; one request arrives. Only one
  // thread gets an event for it (a parked connection is armed once), so the others sleep on.
  Pool pool(std::chrono::milliseconds(60'000));
  const Connection c;
  pool.kept.park(UniqueFd(c.worker));
  std::atomic<int> events{0};
  std::atomic<int> taken{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&] {
      epoll_event event{};
      // Long enough for every thread to be woken if the set woke them all; a count, not a time.
      if (::epoll_wait(pool.epoll.get(), &event, 1, 1000) == 1 &&
          KeptConnections::is_token(event.data.u64)) {
        ++events;
        if (pool.kept.take(event.data.u64)) ++taken;
      }
    });
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // all four asleep on the set
  c.send_request();
  for (auto& thread : threads) thread.join();
  BOOST_TEST(events.load() == 1);
  BOOST_TEST(taken.load() == 1);
}
