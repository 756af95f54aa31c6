// The cap on new deposit-account rows per clock minute (db::NewRowBudget).
#define BOOST_TEST_MODULE new_row_budget
#include <sys/wait.h>
#include <unistd.h>
#include <boost/test/unit_test.hpp>

#include <thread>
#include <vector>

#include "db/new_row_budget.h"
#include "metrics/scoreboard.h"

using namespace connector;
using std::chrono::seconds;
using std::chrono::steady_clock;

namespace {

// 12:00:15 of some day: 45 s left in its minute.
const steady_clock::time_point kMinuteStart{seconds(1700000 / 60 * 60)};
const steady_clock::time_point kAt15s = kMinuteStart + seconds(15);

// How many of `tries` takes succeed; the Retry-After of the last refusal (0: none).
std::pair<unsigned, std::uint32_t> take_many(db::NewRowBudget& budget, unsigned tries,
                                             steady_clock::time_point at) {
  unsigned taken = 0;
  std::uint32_t retry_after = 0;
  for (unsigned i = 0; i < tries; ++i) {
    try {
      budget.take(at);
      ++taken;
    } catch (const db::NewRowCapReached& e) {
      retry_after = e.retry_after_s();
    }
  }
  return {taken, retry_after};
}

}  // namespace

BOOST_AUTO_TEST_CASE(the_cap_holds_within_a_minute_and_says_when_it_ends) {
  db::NewRowWindow window;
  db::NewRowBudget budget(3, window);
  const auto refused_before = metrics::scoreboard().deposit_accounts_refused.load();
  BOOST_TEST((take_many(budget, 5, kAt15s) == std::pair<unsigned, std::uint32_t>{3, 45}));
  BOOST_TEST(metrics::scoreboard().deposit_accounts_refused.load() == refused_before + 2);
  BOOST_TEST((take_many(budget, 1, kMinuteStart + seconds(59)) ==
              std::pair<unsigned, std::uint32_t>{0, 1}));
  // The next minute has a full budget again.
  BOOST_TEST((take_many(budget, 4, kMinuteStart + seconds(60)) ==
              std::pair<unsigned, std::uint32_t>{3, 60}));
}

BOOST_AUTO_TEST_CASE(zero_means_no_cap) {
  db::NewRowWindow window;
  db::NewRowBudget budget(0, window);
  BOOST_TEST((take_many(budget, 10000, kAt15s) == std::pair<unsigned, std::uint32_t>{10000, 0}));
}

BOOST_AUTO_TEST_CASE(budgets_over_one_window_share_it) {
  // Each process (and thread) has its own NewRowBudget over the one shared window.
  db::NewRowWindow window;
  db::NewRowBudget first(100, window);
  db::NewRowBudget second(100, window);
  std::vector<unsigned> taken(8);
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < taken.size(); ++t) {
    threads.emplace_back(
        [&, t] { taken[t] = take_many(t % 2 ? first : second, 50, kAt15s).first; });
  }
  for (auto& thread : threads) thread.join();
  unsigned total = 0;
  for (unsigned n : taken) total += n;
  BOOST_TEST(total == 100u);
}

BOOST_AUTO_TEST_CASE(the_shared_window_holds_for_forked_processes) {
  // As in the worker: the master maps the window before it forks its processes.
  db::NewRowWindow& window = db::create_shared_new_row_window();
  db::NewRowBudget budget(3, window);
  const pid_t child = ::fork();
  BOOST_TEST_REQUIRE(child >= 0);
  if (child == 0) ::_exit(static_cast<int>(take_many(budget, 2, kAt15s).first));
  int status = 0;
  BOOST_TEST_REQUIRE(::waitpid(child, &status, 0) == child);
  BOOST_TEST_REQUIRE(WIFEXITED(status));
  BOOST_TEST(WEXITSTATUS(status) == 2);
  // The child's two rows count here too: one left of three.
  BOOST_TEST((take_many(budget, 5, kAt15s) == std::pair<unsigned, std::uint32_t>{1, 45}));
}

BOOST_AUTO_TEST_CASE(the_window_never_moves_backwards) {
  // A thread preempted with an older `now` (or a clock stepped back) must not start the past
  // minute's count again, which would reset the current minute's.
  db::NewRowWindow window;
  db::NewRowBudget budget(2, window);
  const auto next_minute = kMinuteStart + seconds(60);
  BOOST_TEST((take_many(budget, 1, next_minute + seconds(10)) ==
              std::pair<unsigned, std::uint32_t>{1, 0}));
  BOOST_TEST((take_many(budget, 1, kAt15s) == std::pair<unsigned, std::uint32_t>{1, 0}));
  // Both counted against the newer minute: its cap is reached, until it ends (105 s from 15 s).
  BOOST_TEST((take_many(budget, 1, kAt15s) == std::pair<unsigned, std::uint32_t>{0, 105}));
  BOOST_TEST((take_many(budget, 1, next_minute + seconds(20)) ==
              std::pair<unsigned, std::uint32_t>{0, 40}));
}

BOOST_AUTO_TEST_CASE(a_thread_stalled_for_minutes_counts_against_the_current_minute) {
  // A thread that read the clock, then stalled for over a minute (SIGSTOP, a frozen cgroup)
  // before taking its row must not start its old minute's count again: that would reset the
  // current minute's and let it take twice its cap.
  db::NewRowWindow window;
  db::NewRowBudget budget(2, window);
  const auto two_minutes_on = kAt15s + seconds(120);
  BOOST_TEST((take_many(budget, 2, two_minutes_on) == std::pair<unsigned, std::uint32_t>{2, 0}));
  BOOST_TEST((take_many(budget, 1, kAt15s) == std::pair<unsigned, std::uint32_t>{0, 165}));
  BOOST_TEST((take_many(budget, 1, two_minutes_on) == std::pair<unsigned, std::uint32_t>{0, 45}));
}
