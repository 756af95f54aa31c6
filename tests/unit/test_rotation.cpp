// The rotation rule (db/rotation.h): each case of "out past the bound or unknown; back in only
// within half of it, and then only after a primary reading or once caught up".
#define BOOST_TEST_MODULE rotation
#include <boost/test/unit_test.hpp>

#include <optional>

#include "db/rotation.h"

using namespace connector::db;

namespace {

constexpr std::int64_t kMax = 10'000;

// A replica measured this round, the primary read unless said otherwise.
RotationInputs replica(bool in, std::optional<std::int64_t> lag_ms, bool primary_read = true) {
  return {.role = ServerRole::replica,
          .in_rotation = in,
          .lag_ms = lag_ms,
          .primary_read = primary_read,
          .max_lag_ms = kMax};
}

}  // namespace

BOOST_AUTO_TEST_CASE(in_stays_in_up_to_the_bound) {
  BOOST_TEST(in_rotation_after(replica(true, 0)));
  BOOST_TEST(in_rotation_after(replica(true, kMax)));
  BOOST_TEST(!in_rotation_after(replica(true, kMax + 1)));
}

BOOST_AUTO_TEST_CASE(in_stays_in_without_a_primary_reading) {
  // Measured against the newest time the pool knows the primary wrote: a current replica serves.
  BOOST_TEST(in_rotation_after(replica(true, 4'000, /*primary_read=*/false)));
  BOOST_TEST(!in_rotation_after(replica(true, kMax + 1, /*primary_read=*/false)));
}

BOOST_AUTO_TEST_CASE(out_as_soon_as_the_lag_cannot_be_told) {
  BOOST_TEST(!in_rotation_after(replica(true, std::nullopt)));
  BOOST_TEST(!in_rotation_after(replica(false, std::nullopt)));
  BOOST_TEST(!in_rotation_after(replica(true, std::nullopt, /*primary_read=*/false)));
}

BOOST_AUTO_TEST_CASE(out_comes_back_only_within_half_the_bound) {
  BOOST_TEST(!in_rotation_after(replica(false, kMax)));
  BOOST_TEST(!in_rotation_after(replica(false, kMax / 2 + 1)));
  BOOST_TEST(in_rotation_after(replica(false, kMax / 2)));
  BOOST_TEST(in_rotation_after(replica(false, 0)));
}

BOOST_AUTO_TEST_CASE(out_without_a_primary_reading_comes_back_only_caught_up) {
  // Within half the bound of an old reference says nothing of what the primary wrote since.
  BOOST_TEST(!in_rotation_after(replica(false, kMax / 2, /*primary_read=*/false)));
  BOOST_TEST(!in_rotation_after(replica(false, kCaughtUpMs + 1, /*primary_read=*/false)));
  BOOST_TEST(in_rotation_after(replica(false, kCaughtUpMs, /*primary_read=*/false)));
  BOOST_TEST(in_rotation_after(replica(false, 0, /*primary_read=*/false)));
}

BOOST_AUTO_TEST_CASE(caught_up_is_not_enough_past_half_a_small_bound) {
  // A bound under two heartbeats: half of it still decides.
  auto inputs = replica(false, 800, /*primary_read=*/false);
  inputs.max_lag_ms = 1'000;
  BOOST_TEST(!in_rotation_after(inputs));
  inputs.lag_ms = 500;
  BOOST_TEST(in_rotation_after(inputs));
}

BOOST_AUTO_TEST_CASE(the_primary_is_always_in) {
  for (const bool was : {true, false}) {
    auto inputs = replica(was, std::nullopt, /*primary_read=*/false);
    inputs.role = ServerRole::primary;
    BOOST_TEST(in_rotation_after(inputs));
    inputs.lag_ms = 10 * kMax;
    BOOST_TEST(in_rotation_after(inputs));
  }
}

BOOST_AUTO_TEST_CASE(a_bound_of_zero_keeps_every_replica_in) {
  auto inputs = replica(false, std::nullopt, /*primary_read=*/false);
  inputs.max_lag_ms = 0;
  BOOST_TEST(in_rotation_after(inputs));
  inputs.lag_ms = 999'999'999;
  inputs.in_rotation = true;
  BOOST_TEST(in_rotation_after(inputs));
}

// The rule is constexpr: it needs nothing but its inputs.
static_assert(in_rotation_after({.role = ServerRole::replica,
                                 .in_rotation = false,
                                 .lag_ms = 0,
                                 .primary_read = true,
                                 .max_lag_ms = kMax}));
