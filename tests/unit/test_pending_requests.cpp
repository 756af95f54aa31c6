// fcgi::PendingRequests: connections whose request is not whole yet wait there, without a
// pool thread, until it is whole (then a pool thread takes them), until the peer gives up or
// breaks the protocol, or until their read deadline. Driven over socket pairs.
#define BOOST_TEST_MODULE pending_requests
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <boost/test/unit_test.hpp>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "metrics/scoreboard.h"
#include "pending_requests.h"

using connector::fcgi::PendingRequests;
using connector::fcgi::UniqueFd;
using Clock = std::chrono::steady_clock;

namespace {

constexpr std::chrono::milliseconds kReadTimeout{10000};
constexpr int kWaitMs = 10000;  // the most any step below may take on a loaded machine

// The smallest whole request: FCGI_BEGIN_REQUEST (responder), the empty PARAMS record that ends
// the parameters, the empty STDIN record that ends the body.
const std::string kRequest = std::string("\1\1\0\1\0\10\0\0\0\1\0\0\0\0\0\0", 16) +
                             std::string("\1\4\0\1\0\0\0\0", 8) +
                             std::string("\1\5\0\1\0\0\0\0", 8);

struct Connection {
  int worker = -1;  // the end PendingRequests gets (and closes)
  int peer = -1;    // the client's end
  Connection() {
    int ends[2];
    BOOST_TEST_REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ends) == 0);
    worker = ends[0];
    peer = ends[1];
  }
  ~Connection() { ::close(peer); }
  void send(const std::string& bytes) const {
    BOOST_TEST_REQUIRE(::send(peer, bytes.data(), bytes.size(), MSG_NOSIGNAL) ==
                       static_cast<ssize_t>(bytes.size()));
  }
  // True once the worker's end is closed: the peer reads end-of-file, or a reset when the
  // worker's end had bytes unread.
  bool closed_by_worker() const {
    pollfd p{peer, POLLIN, 0};
    if (::poll(&p, 1, kWaitMs) != 1) return false;
    char byte;
    const ssize_t n = ::recv(peer, &byte, 1, MSG_DONTWAIT);
    return n == 0 || (n < 0 && errno == ECONNRESET);
  }
};

// The next connection made ready, waiting at most kWaitMs.
UniqueFd take_ready(PendingRequests& pending) {
  pollfd p{pending.ready_fd(), POLLIN, 0};
  if (::poll(&p, 1, kWaitMs) != 1) return {};
  return pending.take();
}

std::uint64_t rejected(connector::fastcgi::FcgiRejection reason) {
  return connector::metrics::scoreboard()
      .fcgi_rejected[static_cast<std::size_t>(reason) - 1]
      .load();
}

struct Fixture {
  std::atomic<std::uint32_t> count{0};
  PendingRequests pending{{}, kReadTimeout, count};
  Fixture() { pending.start(); }
};

}  // namespace

BOOST_FIXTURE_TEST_CASE(a_request_that_becomes_whole_is_handed_to_a_thread, Fixture) {
  const Connection c;
  c.send(kRequest.substr(0, 5));
  pending.add(UniqueFd(c.worker), Clock::now() + kReadTimeout);
  BOOST_TEST(count.load() == 1u);
  c.send(kRequest.substr(5, 20));
  c.send(kRequest.substr(25));
  BOOST_TEST(take_ready(pending).get() == c.worker);
  BOOST_TEST(count.load() == 0u);
  BOOST_TEST(pending.empty());
  BOOST_TEST(!pending.take());  // handed over once
}

BOOST_FIXTURE_TEST_CASE(bytes_queued_before_add_are_seen, Fixture) {
  const Connection c;
  c.send(kRequest);  // whole by the time it is added: ADD reports it at once
  pending.add(UniqueFd(c.worker), Clock::now() + kReadTimeout);
  BOOST_TEST(take_ready(pending).get() == c.worker);
}

BOOST_FIXTURE_TEST_CASE(one_past_its_deadline_is_closed_and_counted, Fixture) {
  using connector::fastcgi::FcgiRejection;
  const auto before = rejected(FcgiRejection::kDeadline);
  const Connection c;
  // The BEGIN record, then a PARAMS record of 1000 bytes that never all come.
  c.send(kRequest.substr(0, 16) + std::string("\1\4\0\1\3\xe8\0\0", 8));
  const auto deadline = Clock::now() + std::chrono::milliseconds(500);
  pending.add(UniqueFd(c.worker), deadline);
  // A byte every 100 ms, never the whole request: trickling does not move the deadline, so the
  // connection is closed while the bytes still come (20 times the deadline allowed for it).
  bool closed = false;
  for (int i = 0; i < 100 && !closed; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    closed = ::send(c.peer, "x", 1, MSG_NOSIGNAL) != 1;
  }
  BOOST_TEST(closed);
  BOOST_TEST((Clock::now() >= deadline));  // and it is not closed before it
  BOOST_TEST(rejected(FcgiRejection::kDeadline) == before + 1);
  BOOST_TEST(pending.empty());
  BOOST_TEST(count.load() == 0u);
}

BOOST_FIXTURE_TEST_CASE(a_malformed_record_arriving_later_is_closed_and_counted, Fixture) {
  using connector::fastcgi::FcgiRejection;
  const auto before = rejected(FcgiRejection::kMalformed);
  const Connection c;
  c.send(kRequest.substr(0, 16));
  pending.add(UniqueFd(c.worker), Clock::now() + kReadTimeout);
  c.send(std::string("\2\4\0\1\0\0\0\0", 8));  // version 2
  BOOST_TEST(c.closed_by_worker());
  BOOST_TEST(rejected(FcgiRejection::kMalformed) == before + 1);
  BOOST_TEST(pending.empty());
}

BOOST_FIXTURE_TEST_CASE(a_peer_that_hangs_up_unfinished_is_closed_uncounted, Fixture) {
  const auto& counts = connector::metrics::scoreboard().fcgi_rejected;
  std::uint64_t before = 0;
  for (const auto& c : counts) before += c.load();
  const Connection c;
  c.send(kRequest.substr(0, 10));
  pending.add(UniqueFd(c.worker), Clock::now() + kReadTimeout);
  ::shutdown(c.peer, SHUT_WR);
  BOOST_TEST(c.closed_by_worker());
  std::uint64_t after = 0;
  for (const auto& c : counts) after += c.load();
  BOOST_TEST(after == before);
  BOOST_TEST(pending.empty());
}

BOOST_AUTO_TEST_CASE(past_the_most_waiting_a_connection_is_closed_at_once) {
  constexpr std::size_t kMost = 8;
  std::atomic<std::uint32_t> count{0};
  PendingRequests pending({}, kReadTimeout, count, kMost);
  pending.start();
  std::vector<Connection> waiting(kMost);
  for (const auto& c : waiting) pending.add(UniqueFd(c.worker), Clock::now() + kReadTimeout);
  BOOST_TEST(count.load() == kMost);
  const Connection one_more;
  pending.add(UniqueFd(one_more.worker), Clock::now() + kReadTimeout);
  BOOST_TEST(one_more.closed_by_worker());
  BOOST_TEST(count.load() == kMost);
}
