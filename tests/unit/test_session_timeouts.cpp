// The request's deadline as a connection's limits (db/session_timeouts.h): the client's read and
// connect timeouts, the session's max_statement_time and when it is changed, its statement, and
// when a silence counts as a hung server.
#define BOOST_TEST_MODULE session_timeouts
#include <boost/test/unit_test.hpp>
#include <chrono>

#include "db/session_timeouts.h"

using namespace connector::db;
using std::chrono::milliseconds;
using std::chrono::seconds;

BOOST_AUTO_TEST_CASE(read_timeout_is_the_budget_rounded_down_within_the_configured_one) {
  BOOST_TEST(client_read_timeout_s(5, 0) == 5u);  // no budget: the configured one
  BOOST_TEST(client_read_timeout_s(5, 3000) == 3u);
  BOOST_TEST(client_read_timeout_s(5, 3999) == 3u);
  BOOST_TEST(client_read_timeout_s(5, 999) == 1u);  // at least 1 s
  BOOST_TEST(client_read_timeout_s(5, 1) == 1u);
  BOOST_TEST(client_read_timeout_s(5, 60000) == 5u);
}

BOOST_AUTO_TEST_CASE(connect_timeout_is_what_is_left_rounded_up_within_the_configured_one) {
  BOOST_TEST(client_connect_timeout_s(milliseconds(1), 2) == 1u);
  BOOST_TEST(client_connect_timeout_s(milliseconds(1000), 2) == 1u);
  BOOST_TEST(client_connect_timeout_s(milliseconds(1001), 2) == 2u);
  BOOST_TEST(client_connect_timeout_s(seconds(10), 2) == 2u);
  BOOST_TEST(client_connect_timeout_s(Duration::max(), 2) == 2u);    // no deadline
  BOOST_TEST(client_connect_timeout_s(milliseconds(500), 0) == 1u);  // never 0
  BOOST_TEST(client_connect_timeout_s(std::chrono::nanoseconds(1), 2) == 1u);
}

BOOST_AUTO_TEST_CASE(statement_timeout_is_what_is_left_within_the_budget_and_read_timeout) {
  // Budget 1500 ms: read timeout 1 s, so at most 800 ms (200 ms before the client gives up).
  BOOST_TEST(session_statement_timeout_ms(1500, 1, Duration::max()) == 800u);
  BOOST_TEST(session_statement_timeout_ms(1500, 1, milliseconds(300)) == 300u);
  // Budget 2500 ms: read timeout 2 s, at most 1800 ms.
  BOOST_TEST(session_statement_timeout_ms(2500, 2, milliseconds(2400)) == 1800u);
  // A budget under the read timeout's bound: the budget.
  BOOST_TEST(session_statement_timeout_ms(3000, 5, Duration::max()) == 3000u);
  BOOST_TEST(session_statement_timeout_ms(3000, 5, milliseconds(1234)) == 1234u);
  // Nothing left: 1 ms (0 would mean no limit).
  BOOST_TEST(session_statement_timeout_ms(3000, 5, Duration::zero()) == 1u);
  BOOST_TEST(session_statement_timeout_ms(3000, 5, milliseconds(-50)) == 1u);
  BOOST_TEST(session_statement_timeout_ms(3000, 5, std::chrono::microseconds(999)) == 1u);
}

BOOST_AUTO_TEST_CASE(statement_timeout_changes_when_unset_or_off_by_more_than_the_slack) {
  BOOST_TEST(statement_timeout_changes(0, 3000));
  BOOST_TEST(!statement_timeout_changes(3000, 3000));
  BOOST_TEST(!statement_timeout_changes(3000, 2950));
  BOOST_TEST(statement_timeout_changes(3000, 2949));
  BOOST_TEST(!statement_timeout_changes(3000, 3050));
  BOOST_TEST(statement_timeout_changes(3000, 3051));
  BOOST_TEST(!statement_timeout_changes(40, 1));
  BOOST_TEST(statement_timeout_changes(52, 1));
}

BOOST_AUTO_TEST_CASE(statement_timeout_sql_sets_the_statement_and_lock_waits) {
  BOOST_TEST(statement_timeout_sql(2500) ==
             "SET SESSION max_statement_time = 2.500, lock_wait_timeout = 3,"
             " innodb_lock_wait_timeout = 3");
  BOOST_TEST(statement_timeout_sql(1) ==
             "SET SESSION max_statement_time = 0.001, lock_wait_timeout = 1,"
             " innodb_lock_wait_timeout = 1");
  BOOST_TEST(statement_timeout_sql(3000) ==
             "SET SESSION max_statement_time = 3.000, lock_wait_timeout = 3,"
             " innodb_lock_wait_timeout = 3");
  BOOST_TEST(statement_timeout_sql(1050) ==
             "SET SESSION max_statement_time = 1.050, lock_wait_timeout = 2,"
             " innodb_lock_wait_timeout = 2");
}

BOOST_AUTO_TEST_CASE(a_wait_within_the_margin_of_the_read_timeout_is_a_hung_server) {
  BOOST_TEST(!waited_out_read_timeout(milliseconds(1899), 2));
  BOOST_TEST(waited_out_read_timeout(milliseconds(1900), 2));
  BOOST_TEST(waited_out_read_timeout(seconds(5), 2));
  BOOST_TEST(!waited_out_read_timeout(milliseconds(10), 1));
}
