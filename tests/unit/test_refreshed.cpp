// What a refreshed copy serves (db/refreshed.h), when the refresher reloads it
// (db/refresher.h), and when the circuit breaker opens (db/circuit_breaker.h).
// A fake clock: the tests move time by hand.
#define BOOST_TEST_MODULE refreshed
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <memory>
#include <thread>

#include "db/circuit_breaker.h"
#include "db/connection.h"
#include "db/refreshed.h"
#include "db/refresher.h"

using connector::db::CircuitBreaker;
using connector::db::DatabaseUnavailable;
using connector::db::Refreshed;
using connector::db::Refresher;
using namespace std::chrono_literals;

namespace {

Refreshed<int>::Clock::time_point fake_now{};
Refreshed<int>::Clock::time_point now() { return fake_now; }

struct Fixture {
  Fixture() { fake_now = {}; }
};

}  // namespace

BOOST_FIXTURE_TEST_CASE(nothing_is_served_before_the_first_load, Fixture) {
  Refreshed<int> copy("test", Refreshed<int>::Clock::duration::max(), now);
  BOOST_CHECK_THROW(copy.get(), DatabaseUnavailable);
  copy.store(7);
  BOOST_TEST(*copy.get() == 7);
}

BOOST_FIXTURE_TEST_CASE(without_max_age_the_last_value_serves_for_ever, Fixture) {
  Refreshed<int> copy("reference data", Refreshed<int>::Clock::duration::max(), now);
  copy.store(1);
  fake_now += 24h;
  BOOST_TEST(*copy.get() == 1);
}

BOOST_FIXTURE_TEST_CASE(past_max_age_every_caller_gets_unavailable_until_a_new_load, Fixture) {
  Refreshed<int> copy("chain supply", 2s, now);
  copy.store(1);
  fake_now += 1999ms;
  BOOST_TEST(*copy.get() == 1);
  fake_now += 1ms;
  BOOST_CHECK_THROW(copy.get(), DatabaseUnavailable);
  BOOST_CHECK_THROW(copy.get(), DatabaseUnavailable);
  copy.store(2);
  BOOST_TEST(*copy.get() == 2);
}

BOOST_FIXTURE_TEST_CASE(a_stored_value_replaces_the_old_one_for_new_callers_only, Fixture) {
  Refreshed<int> copy("test", Refreshed<int>::Clock::duration::max(), now);
  copy.store(1);
  const auto held = copy.get();
  copy.store(2);
  BOOST_TEST(*held == 1);  // a request in flight keeps what it started with
  BOOST_TEST(*copy.get() == 2);
}

BOOST_AUTO_TEST_CASE(newer_than_waits_for_the_next_store_or_gives_up_at_its_bound) {
  Refreshed<int> copy("test");
  copy.store(1);
  const auto seen = copy.get();
  // Nothing newer: the same value back once the bound has passed.
  const auto unchanged =
      copy.newer_than(seen, Refreshed<int>::Clock::now() + std::chrono::milliseconds(20));
  BOOST_TEST(unchanged == seen);
  std::thread storer([&] {
    std::this_thread::sleep_for(20ms);
    copy.store(2);
  });
  const auto newer = copy.newer_than(seen, Refreshed<int>::Clock::now() + 10s);
  storer.join();
  BOOST_TEST(*newer == 2);
}

BOOST_AUTO_TEST_CASE(the_refresher_waits_its_interval_with_jitter_after_a_load) {
  BOOST_TEST(Refresher::next_wait(1000ms, 0, 0.0).count() == 1000);
  BOOST_TEST(Refresher::next_wait(1000ms, 0, 0.1).count() == 1100);
  BOOST_TEST(Refresher::next_wait(1000ms, 0, -0.1).count() == 900);
}

BOOST_AUTO_TEST_CASE(
    after_failures_the_refresher_probes_every_half_second_or_its_interval_if_shorter) {
  BOOST_TEST(Refresher::next_wait(1000ms, 1, 0.05).count() == 250);
  BOOST_TEST(Refresher::next_wait(1000ms, 2, 0.05).count() == 500);
  BOOST_TEST(Refresher::next_wait(1000ms, 40, 0.05).count() == 500);
  BOOST_TEST(Refresher::next_wait(3600000ms, 5, 0.0).count() == 500);
  BOOST_TEST(Refresher::next_wait(100ms, 3, 0.0).count() == 100);  // never slower
  BOOST_TEST(Refresher::next_wait(50ms, 1, 0.0).count() == 50);
}

BOOST_AUTO_TEST_CASE(the_breaker_opens_after_consecutive_calls_without_an_answer) {
  CircuitBreaker breaker;
  breaker.record_no_answer();
  breaker.record_no_answer();
  BOOST_TEST(!breaker.open());
  breaker.record_answer();  // an answer in between starts the count again
  breaker.record_no_answer();
  breaker.record_no_answer();
  BOOST_TEST(!breaker.open());
  breaker.record_no_answer();
  BOOST_TEST(breaker.open());
  breaker.record_no_answer();
  BOOST_TEST(breaker.open());
  breaker.record_answer();  // the probe's answer closes it
  BOOST_TEST(!breaker.open());
}
