// The retry schedule of an unacknowledged delivery (webhooks/retry_schedule.h).
#define BOOST_TEST_MODULE webhook_retry
#include <boost/test/unit_test.hpp>
#include <chrono>

#include "webhooks/retry_schedule.h"

using namespace connector::webhooks;
using std::chrono::hours;
using std::chrono::seconds;
using std::chrono::system_clock;

BOOST_AUTO_TEST_CASE(steps_double_from_one_second_to_one_hour) {
  // The top of each wait's range (a draw just under 1) is its step.
  const std::int64_t expected_s[] = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 3600, 3600};
  for (std::uint32_t attempt = 1; attempt <= 14; ++attempt) {
    BOOST_TEST(retry_delay(attempt, 1.0).count() == expected_s[attempt - 1] * 1000, attempt);
  }
  BOOST_TEST(retry_delay(1'000'000, 0.999999).count() <= 3'600'000);
}

BOOST_AUTO_TEST_CASE(each_wait_lies_in_the_upper_half_of_its_step) {
  BOOST_TEST(retry_delay(1, 0.0).count() == 500);
  BOOST_TEST(retry_delay(1, 0.5).count() == 750);
  BOOST_TEST(retry_delay(4, 0.0).count() == 4000);
  BOOST_TEST(retry_delay(4, 0.25).count() == 5000);
  BOOST_TEST(retry_delay(30, 0.0).count() == 1'800'000);
  // A draw out of [0, 1] (a faulty source) stays within the range.
  BOOST_TEST(retry_delay(1, -3.0).count() == 500);
  BOOST_TEST(retry_delay(1, 7.0).count() == 1000);
  BOOST_TEST(retry_delay(0, 0.0).count() == 500);  // as attempt 1
}

BOOST_AUTO_TEST_CASE(a_subscription_is_failing_after_24_hours_of_failures) {
  const system_clock::time_point since{seconds(1'795'772'374)};
  BOOST_TEST(!is_failing(since, since));
  BOOST_TEST(!is_failing(since, since + hours(24) - seconds(1)));
  BOOST_TEST(is_failing(since, since + hours(24)));
  BOOST_TEST(is_failing(since, since + hours(100)));
}
