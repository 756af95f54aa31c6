// When a shared snapshot is reloaded, and what is served when reloads fail (db/snapshot.h).
// A fake clock: the tests move time by hand.
#define BOOST_TEST_MODULE snapshot
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <stdexcept>

#include "db/database.h"
#include "db/snapshot.h"

using connector::db::DatabaseUnavailable;
using connector::db::Snapshot;
using namespace std::chrono_literals;

namespace {

Snapshot<int>::Clock::time_point fake_now{};
Snapshot<int>::Clock::time_point now() { return fake_now; }

// A loader that counts its calls and returns the next value, or throws while the database is
// down.
struct Loader {
  int value = 0;
  int calls = 0;
  bool down = false;

  int operator()() {
    ++calls;
    if (down) throw DatabaseUnavailable("down");
    return ++value;
  }
};

struct Fixture {
  Fixture() { fake_now = {}; }
  Loader load;
  int get(Snapshot<int>& snapshot) {
    return *snapshot.get([this] { return load(); });
  }
};

}  // namespace

BOOST_FIXTURE_TEST_CASE(loaded_once_per_interval, Fixture) {
  Snapshot<int> snapshot("test", 1s, Snapshot<int>::Clock::duration::max(), now);
  BOOST_TEST(get(snapshot) == 1);
  fake_now += 999ms;
  BOOST_TEST(get(snapshot) == 1);
  BOOST_TEST(load.calls == 1);
  fake_now += 1ms;
  BOOST_TEST(get(snapshot) == 2);
  BOOST_TEST(load.calls == 2);
}

BOOST_FIXTURE_TEST_CASE(without_a_value_a_failure_reaches_the_caller_every_time, Fixture) {
  Snapshot<int> snapshot("test", 1s, Snapshot<int>::Clock::duration::max(), now);
  load.down = true;
  BOOST_CHECK_THROW(get(snapshot), DatabaseUnavailable);
  BOOST_CHECK_THROW(get(snapshot), DatabaseUnavailable);
  BOOST_TEST(load.calls == 2);
  load.down = false;
  BOOST_TEST(get(snapshot) == 1);
}

BOOST_FIXTURE_TEST_CASE(without_max_age_the_last_value_serves_through_an_outage, Fixture) {
  Snapshot<int> snapshot("reference data", 1s, Snapshot<int>::Clock::duration::max(), now);
  BOOST_TEST(get(snapshot) == 1);
  load.down = true;
  fake_now += 1h;
  BOOST_TEST(get(snapshot) == 1);
  BOOST_TEST(load.calls == 2);
  // The next attempt waits for the interval, not the next request.
  fake_now += 500ms;
  BOOST_TEST(get(snapshot) == 1);
  BOOST_TEST(load.calls == 2);
  fake_now += 500ms;
  BOOST_TEST(get(snapshot) == 1);
  BOOST_TEST(load.calls == 3);
  load.down = false;
  fake_now += 1s;
  BOOST_TEST(get(snapshot) == 2);
}

BOOST_FIXTURE_TEST_CASE(past_max_age_a_failure_reaches_every_caller, Fixture) {
  Snapshot<int> snapshot("chain supply", 1s, 2s, now);
  BOOST_TEST(get(snapshot) == 1);
  load.down = true;
  fake_now += 1s;  // due, and still young enough to serve when the reload fails
  BOOST_TEST(get(snapshot) == 1);
  fake_now += 999ms;
  BOOST_TEST(get(snapshot) == 1);
  BOOST_TEST(load.calls == 2);
  fake_now += 1ms;  // two intervals old: no longer served
  BOOST_CHECK_THROW(get(snapshot), DatabaseUnavailable);
  BOOST_CHECK_THROW(get(snapshot), DatabaseUnavailable);
  BOOST_TEST(load.calls == 4);  // every caller tries again
  load.down = false;
  BOOST_TEST(get(snapshot) == 2);
}

BOOST_FIXTURE_TEST_CASE(refresh_reloads_whatever_the_age, Fixture) {
  Snapshot<int> snapshot("test", 1h, Snapshot<int>::Clock::duration::max(), now);
  BOOST_TEST(get(snapshot) == 1);
  BOOST_TEST(*snapshot.refresh([this] { return load(); }) == 2);
  BOOST_TEST(get(snapshot) == 2);
  BOOST_TEST(load.calls == 2);
}

BOOST_FIXTURE_TEST_CASE(an_interval_of_zero_reloads_on_every_call, Fixture) {
  Snapshot<int> snapshot("test", 0s, 0s, now);
  BOOST_TEST(get(snapshot) == 1);
  BOOST_TEST(get(snapshot) == 2);
  load.down = true;
  BOOST_CHECK_THROW(get(snapshot), DatabaseUnavailable);
}
