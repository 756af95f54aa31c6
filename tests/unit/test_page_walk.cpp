// Which end a history page is read from (db/page_walk.h).
#define BOOST_TEST_MODULE page_walk
#include <boost/test/unit_test.hpp>

#include "db/page_walk.h"

using connector::db::cheapest_walk;
using connector::db::PageWalk;
using connector::domain::SortOrder;

constexpr auto kAsc = SortOrder::kAscending;
constexpr auto kDesc = SortOrder::kDescending;

BOOST_AUTO_TEST_CASE(shallow_pages_are_walked_as_asked) {
  BOOST_TEST((cheapest_walk(2'000'000, 0, 20, kDesc) == PageWalk{kDesc, 0, 20, false}));
  BOOST_TEST((cheapest_walk(2'000'000, 9'980, 20, kAsc) == PageWalk{kAsc, 9'980, 20, false}));
  // Even at the very end of a small table: under 10,000 nothing is worth a second statement.
  BOOST_TEST((cheapest_walk(9'990, 9'980, 20, kDesc) == PageWalk{kDesc, 9'980, 20, false}));
}

BOOST_AUTO_TEST_CASE(a_deep_desc_page_is_read_forwards_from_the_other_end) {
  // The DESC page at offset 1,000,000 of 2,000,000 is rows 999,980..999,999 counted ASC.
  BOOST_TEST((cheapest_walk(2'000'000, 1'000'000, 20, kDesc) == PageWalk{kAsc, 999'980, 20, true}));
  // A DESC step costs double, so DESC is reversed from a third of the way down...
  BOOST_TEST(
      (cheapest_walk(3'000'000, 1'000'000, 20, kDesc) == PageWalk{kAsc, 1'999'980, 20, true}));
  // ...and kept above it.
  BOOST_TEST((cheapest_walk(3'000'000, 999'980, 20, kDesc) == PageWalk{kDesc, 999'980, 20, false}));
}

BOOST_AUTO_TEST_CASE(an_asc_page_is_reversed_only_near_the_end) {
  BOOST_TEST(
      (cheapest_walk(2'000'000, 1'000'000, 20, kAsc) == PageWalk{kAsc, 1'000'000, 20, false}));
  // 2 * (2,000,000 - 1,400,000 - 20) < 1,400,000: walk 599,980 rows backwards.
  BOOST_TEST((cheapest_walk(2'000'000, 1'400'000, 20, kAsc) == PageWalk{kDesc, 599'980, 20, true}));
}

BOOST_AUTO_TEST_CASE(the_last_partial_page_reads_only_its_rows) {
  // 20,060 records, pages of 100: the last page (offset 20,000) holds 60, the first 60 DESC.
  BOOST_TEST((cheapest_walk(20'060, 20'000, 100, kAsc) == PageWalk{kDesc, 0, 60, true}));
  BOOST_TEST((cheapest_walk(20'060, 20'000, 100, kDesc) == PageWalk{kAsc, 0, 60, true}));
}

BOOST_AUTO_TEST_CASE(an_offset_past_the_end_is_left_alone) {
  BOOST_TEST((cheapest_walk(20'000, 20'000, 20, kDesc) == PageWalk{kDesc, 20'000, 20, false}));
  BOOST_TEST((cheapest_walk(0, 50'000, 20, kAsc) == PageWalk{kAsc, 50'000, 20, false}));
}
