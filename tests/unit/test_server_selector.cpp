// Which server a connection uses (db::ServerSelector), on a fake clock over real circuit
// breakers: first choice, servers passed over (breaker open, out of rotation, pausing after a
// failed connect), failover, failback, probes, and what answers and silences do to the breakers.
#define BOOST_TEST_MODULE server_selector
#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <memory>
#include <vector>

#include "db/circuit_breaker.h"
#include "db/rotation.h"
#include "db/server_selector.h"

using connector::db::CircuitBreaker;
using connector::db::Rotation;
using connector::db::ServerSelector;
using Verdict = ServerSelector::Verdict;
using std::chrono::milliseconds;
using std::chrono::seconds;

namespace {

// Three servers (two replicas, then the primary), failback after 30 s, on a clock the test moves.
struct Fixture {
  ServerSelector::Clock::time_point now{seconds(100000)};
  std::vector<std::unique_ptr<CircuitBreaker>> breakers;
  std::vector<std::unique_ptr<Rotation>> rotations;
  std::unique_ptr<ServerSelector> selector;

  explicit Fixture(bool probe = false) {
    std::vector<ServerSelector::Checks> pointers;
    for (int i = 0; i < 3; ++i) {
      breakers.push_back(std::make_unique<CircuitBreaker>());
      rotations.push_back(std::make_unique<Rotation>());
      pointers.push_back({breakers.back().get(), rotations.back().get()});
    }
    selector =
        std::make_unique<ServerSelector>(pointers, seconds(30), probe, [this] { return now; });
  }

  void open(std::size_t server) {
    for (std::uint32_t i = 0; i < CircuitBreaker::kOpenAfter; ++i)
      breakers[server]->record_no_answer();
    BOOST_REQUIRE(breakers[server]->open());
  }
  // A new connection's walk through the servers: the first it connects to, failing those in
  // `failing` (without an answer); -1 when none.
  int connect(const std::vector<std::size_t>& failing = {}) {
    for (std::size_t i = 0; i < selector->size(); ++i) {
      if (selector->consider(i) != Verdict::kTry) continue;
      if (std::find(failing.begin(), failing.end(), i) != failing.end()) {
        selector->connect_failed(i, /*no_answer=*/true);
        continue;
      }
      selector->connected(i);
      return static_cast<int>(i);
    }
    return -1;
  }
};

struct ProbeFixture : Fixture {
  ProbeFixture() : Fixture(/*probe=*/true) {}
};

}  // namespace

BOOST_FIXTURE_TEST_CASE(the_first_server_is_the_first_choice, Fixture) {
  BOOST_TEST(selector->size() == 3u);
  BOOST_TEST(selector->current() == 0u);
  BOOST_TEST((selector->consider(0) == Verdict::kTry));
  BOOST_TEST(connect() == 0);
  BOOST_TEST(selector->keep_current());
  now += seconds(3600);  // on the first server, no failback is ever due
  BOOST_TEST(selector->keep_current());
}

BOOST_FIXTURE_TEST_CASE(an_open_breaker_is_passed_over, Fixture) {
  open(0);
  BOOST_TEST((selector->consider(0) == Verdict::kBreakerOpen));
  BOOST_TEST(connect() == 1);
}

BOOST_FIXTURE_TEST_CASE(a_server_out_of_rotation_is_passed_over, Fixture) {
  rotations[0]->set(false);
  BOOST_TEST((selector->consider(0) == Verdict::kOutOfRotation));
  BOOST_TEST(connect() == 1);
  // Open and out of rotation: reported as open.
  open(0);
  BOOST_TEST((selector->consider(0) == Verdict::kBreakerOpen));
}

BOOST_FIXTURE_TEST_CASE(every_server_passed_over_leaves_none, Fixture) {
  open(0);
  rotations[1]->set(false);
  open(2);
  BOOST_TEST(connect() == -1);
}

BOOST_FIXTURE_TEST_CASE(a_live_connection_leaves_a_server_passed_over, Fixture) {
  BOOST_TEST(connect() == 0);
  rotations[0]->set(false);
  BOOST_TEST(!selector->keep_current());
  rotations[0]->set(true);
  BOOST_TEST(selector->keep_current());
  open(0);
  BOOST_TEST(!selector->keep_current());
}

BOOST_FIXTURE_TEST_CASE(a_failed_connect_pauses_its_server, Fixture) {
  BOOST_TEST(connect({0}) == 1);  // failover
  BOOST_TEST((selector->consider(0) == Verdict::kPausing));
  now += ServerSelector::kReconnectPause - milliseconds(1);
  BOOST_TEST((selector->consider(0) == Verdict::kPausing));
  now += milliseconds(1);
  BOOST_TEST((selector->consider(0) == Verdict::kTry));
}

BOOST_FIXTURE_TEST_CASE(every_server_pausing_leaves_none, Fixture) {
  BOOST_TEST(connect({0, 1, 2}) == -1);
  BOOST_TEST(connect() == -1);
  now += ServerSelector::kReconnectPause;
  BOOST_TEST(connect() == 0);
}

BOOST_FIXTURE_TEST_CASE(a_fallback_is_kept_until_failback_is_due, Fixture) {
  BOOST_TEST(connect({0}) == 1);
  BOOST_TEST(selector->current() == 1u);
  BOOST_TEST(selector->keep_current());
  now += seconds(29);
  BOOST_TEST(selector->keep_current());
  now += seconds(1);  // 30 s since it connected (and since server 0 failed)
  BOOST_TEST(!selector->keep_current());
  BOOST_TEST(connect() == 0);  // failback
  BOOST_TEST(selector->keep_current());
}

BOOST_FIXTURE_TEST_CASE(failback_is_counted_from_the_connects_start, Fixture) {
  BOOST_TEST((selector->consider(0) == Verdict::kTry));
  selector->connect_failed(0, /*no_answer=*/true);
  BOOST_TEST((selector->consider(1) == Verdict::kTry));
  now += seconds(2);  // the connect took 2 s
  selector->connected(1);
  now += seconds(28);
  BOOST_TEST(!selector->keep_current());
}

BOOST_FIXTURE_TEST_CASE(failback_waits_for_an_earlier_server_that_failed, Fixture) {
  BOOST_TEST(connect({0}) == 1);
  now += seconds(10);
  BOOST_TEST(connect({0, 1}) == 2);  // both failed again: on the primary since t = 10 s
  now += seconds(20);                // server 0 first failed 30 s ago, last 20 s ago
  BOOST_TEST(selector->keep_current());
  now += seconds(10);
  BOOST_TEST(!selector->keep_current());
}

BOOST_FIXTURE_TEST_CASE(failback_is_due_at_once_when_an_earlier_server_is_back, Fixture) {
  rotations[0]->set(false);
  BOOST_TEST(connect() == 1);  // server 0 never failed a connect: only out of rotation
  BOOST_TEST(selector->keep_current());
  rotations[0]->set(true);
  BOOST_TEST(!selector->keep_current());
  BOOST_TEST(connect() == 0);
}

BOOST_FIXTURE_TEST_CASE(no_failback_to_a_server_still_passed_over, Fixture) {
  open(0);
  BOOST_TEST(connect() == 1);
  now += seconds(29);
  BOOST_TEST(selector->keep_current());
  now += seconds(1);
  BOOST_TEST(!selector->keep_current());  // the time is up: a new connection looks again
  BOOST_TEST(connect() == 1);             // and server 0 is still passed over
}

BOOST_FIXTURE_TEST_CASE(a_connect_without_an_answer_counts_against_the_breaker, Fixture) {
  for (std::uint32_t i = 0; i < CircuitBreaker::kOpenAfter; ++i) {
    BOOST_TEST(!breakers[0]->open());
    BOOST_TEST((selector->consider(0) == Verdict::kTry));
    selector->connect_failed(0, /*no_answer=*/true);
    now += ServerSelector::kReconnectPause;
  }
  BOOST_TEST(breakers[0]->open());
  BOOST_TEST((selector->consider(0) == Verdict::kBreakerOpen));
}

BOOST_FIXTURE_TEST_CASE(a_refused_connect_pauses_but_does_not_count, Fixture) {
  for (std::uint32_t i = 0; i < CircuitBreaker::kOpenAfter; ++i) {
    BOOST_TEST((selector->consider(0) == Verdict::kTry));
    selector->connect_failed(0, /*no_answer=*/false);
    BOOST_TEST((selector->consider(0) == Verdict::kPausing));
    now += ServerSelector::kReconnectPause;
  }
  BOOST_TEST(!breakers[0]->open());
}

BOOST_FIXTURE_TEST_CASE(a_connect_and_an_answer_reset_the_count, Fixture) {
  breakers[0]->record_no_answer();
  breakers[0]->record_no_answer();
  BOOST_TEST(connect() == 0);  // a handshake is an answer
  breakers[0]->record_no_answer();
  breakers[0]->record_no_answer();
  BOOST_TEST(!breakers[0]->open());
  selector->answered();
  breakers[0]->record_no_answer();
  breakers[0]->record_no_answer();
  BOOST_TEST(!breakers[0]->open());
}

BOOST_FIXTURE_TEST_CASE(a_hung_server_counts_and_pauses, Fixture) {
  BOOST_TEST(connect() == 0);
  selector->hung();
  BOOST_TEST((selector->consider(0) == Verdict::kPausing));  // the retry passes it over
  BOOST_TEST(connect() == 1);
  selector->hung();  // counted on the current server's breaker only
  selector->hung();
  BOOST_TEST(!breakers[0]->open());
  BOOST_TEST(!breakers[1]->open());
  selector->hung();
  BOOST_TEST(breakers[1]->open());
  BOOST_TEST(!selector->keep_current());
}

BOOST_FIXTURE_TEST_CASE(a_handshake_between_hangs_resets_the_count, Fixture) {
  BOOST_TEST(connect() == 0);
  selector->hung();
  selector->hung();
  now += ServerSelector::kReconnectPause;
  BOOST_TEST(connect() == 0);
  selector->hung();
  BOOST_TEST(!breakers[0]->open());
}

BOOST_FIXTURE_TEST_CASE(a_probe_ignores_breakers_and_rotation, ProbeFixture) {
  open(0);
  rotations[1]->set(false);
  BOOST_TEST((selector->consider(0) == Verdict::kTry));
  BOOST_TEST((selector->consider(1) == Verdict::kTry));
  selector->connected(0);
  BOOST_TEST(selector->keep_current());
  BOOST_TEST(!breakers[0]->open());  // its answer closed the breaker
}

BOOST_FIXTURE_TEST_CASE(a_probe_still_pauses_after_a_failed_connect, ProbeFixture) {
  open(0);
  BOOST_TEST((selector->consider(0) == Verdict::kTry));
  selector->connect_failed(0, /*no_answer=*/true);
  BOOST_TEST((selector->consider(0) == Verdict::kPausing));
  BOOST_TEST(breakers[0]->open());
}

BOOST_AUTO_TEST_CASE(servers_without_a_breaker_are_never_passed_over) {
  auto now = ServerSelector::Clock::time_point{seconds(100000)};
  ServerSelector selector({ServerSelector::Checks{}, ServerSelector::Checks{}}, seconds(30),
                          /*probe=*/false, [&] { return now; });
  BOOST_TEST((selector.consider(0) == Verdict::kTry));
  selector.connect_failed(0, /*no_answer=*/true);
  BOOST_TEST((selector.consider(1) == Verdict::kTry));
  selector.connected(1);
  selector.answered();
  selector.hung();
  BOOST_TEST(selector.current() == 1u);
  now += seconds(30);
  BOOST_TEST(!selector.keep_current());
}
