// The log line's form (util/log.h): its time when journald does not stamp it, and how the
// journal is recognised; the throttle of one kind of line (util/log_throttle.h).
#define BOOST_TEST_MODULE log
#include <atomic>
#include <boost/test/unit_test.hpp>
#include <chrono>
#include <thread>
#include <vector>

#include "util/log.h"
#include "util/log_throttle.h"

using namespace connector;
using std::chrono::milliseconds;
using std::chrono::system_clock;

BOOST_AUTO_TEST_CASE(a_line_starts_with_its_utc_time_to_the_millisecond) {
  // 2026-11-27T09:39:34.007Z, and a thousandth of a millisecond later: still .007.
  const system_clock::time_point at{milliseconds(1795772374007)};
  BOOST_TEST(util::log_line("error: ", "it broke", at) ==
             "2026-11-27T09:39:34.007Z error: it broke\n");
  BOOST_TEST(util::log_line("info: ", "x", at + std::chrono::microseconds(999)) ==
             "2026-11-27T09:39:34.007Z info: x\n");
  BOOST_TEST(util::log_line("info: ", "", system_clock::time_point{}) ==
             "1970-01-01T00:00:00.000Z info: \n");
  BOOST_TEST(util::log_line("warning: ", "y", at + milliseconds(992)) ==
             "2026-11-27T09:39:34.999Z warning: y\n");
}

BOOST_AUTO_TEST_CASE(under_journald_a_line_is_unchanged) {
  BOOST_TEST(util::log_line("warning: ", "lagging", std::nullopt) == "warning: lagging\n");
}

BOOST_AUTO_TEST_CASE(the_journal_is_the_stream_journal_stream_names) {
  BOOST_TEST(util::is_journal_stream("8:12345", 8, 12345));
  BOOST_TEST(!util::is_journal_stream(nullptr, 8, 12345));
  BOOST_TEST(!util::is_journal_stream("8:12345", 8, 12346));  // stderr redirected elsewhere
  BOOST_TEST(!util::is_journal_stream("9:12345", 8, 12345));
  for (const char* bad : {"", "8", "8:", ":12345", "8:12345x", "8;12345", "a:b"}) {
    BOOST_TEST(!util::is_journal_stream(bad, 8, 12345), bad);
  }
}

BOOST_AUTO_TEST_CASE(a_throttle_lets_the_first_line_through_then_one_per_period) {
  util::LogThrottle lines(std::chrono::seconds(10));
  BOOST_TEST(lines.due_at(-5));  // whatever the clock reads, the first line is due
  BOOST_TEST(!lines.due_at(-5));
  BOOST_TEST(!lines.due_at(4));
  BOOST_TEST(lines.due_at(5));
  BOOST_TEST(!lines.due_at(14));
  BOOST_TEST(lines.due_at(100));
}

BOOST_AUTO_TEST_CASE(a_throttle_reads_the_steady_clock) {
  util::LogThrottle lines(std::chrono::seconds(60));
  BOOST_TEST(lines.due());
  BOOST_TEST(!lines.due());
}

BOOST_AUTO_TEST_CASE(of_threads_that_see_the_event_at_once_one_writes_the_line) {
  util::LogThrottle lines(std::chrono::seconds(60));
  std::atomic<int> due{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&] {
      for (int round = 0; round < 1000; ++round) due += lines.due_at(7) ? 1 : 0;
    });
  }
  for (auto& t : threads) t.join();
  BOOST_TEST(due.load() == 1);
}
