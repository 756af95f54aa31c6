// Replication lag arithmetic (db/replica_lag.h): the reference clock and the lag (the
// rotation rule: test_rotation.cpp).
#define BOOST_TEST_MODULE replica_lag
#include <boost/test/unit_test.hpp>

#include <array>
#include <optional>

#include "db/replica_lag.h"

using namespace connector::db;
using Us = std::optional<std::int64_t>;

namespace {
constexpr std::int64_t kSecond = 1'000'000;
constexpr std::int64_t kNow = 1'800'000'000 * kSecond;
}  // namespace

BOOST_AUTO_TEST_CASE(the_primary_clock_is_the_reference_while_it_answers) {
  const std::array<Us, 2> heartbeats = {kNow + 5 * kSecond, std::nullopt};
  BOOST_TEST(*lag_reference(kNow, kNow - kSecond, heartbeats) == kNow);
}

BOOST_AUTO_TEST_CASE(without_the_primary_the_newest_time_written_by_it) {
  const std::array<Us, 3> heartbeats = {kNow - 3 * kSecond, std::nullopt, kNow - kSecond};
  BOOST_TEST(*lag_reference(std::nullopt, kNow - 2 * kSecond, heartbeats) == kNow - kSecond);
  BOOST_TEST(*lag_reference(std::nullopt, kNow, heartbeats) == kNow);
  BOOST_TEST(*lag_reference(std::nullopt, std::nullopt, heartbeats) == kNow - kSecond);
  const std::array<Us, 1> none = {std::nullopt};
  BOOST_TEST(!lag_reference(std::nullopt, std::nullopt, none).has_value());
}

BOOST_AUTO_TEST_CASE(lag_in_milliseconds_never_negative_unknown_without_a_heartbeat) {
  BOOST_TEST(*replica_lag_ms(kNow, kNow - 2'500'000) == 2500);
  BOOST_TEST(*replica_lag_ms(kNow, kNow - 999) == 0);
  BOOST_TEST(*replica_lag_ms(kNow, kNow + kSecond) == 0);  // a replica's clock ahead
  BOOST_TEST(!replica_lag_ms(kNow, std::nullopt).has_value());
  BOOST_TEST(!replica_lag_ms(std::nullopt, kNow).has_value());
}
