// MariaDB's error codes by class (db/mariadb_errors.h): the one table, and the predicates the
// connection decides by, checked code by code against the lists they replaced.
#define BOOST_TEST_MODULE mariadb_errors
#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <set>
#include <vector>

#include "db/mariadb_errors.h"

using namespace connector::db;

namespace {

const std::set<int> kNoAnswer = {2002, 2003, 2006, 2013, 2055, 4031};
const std::set<int> kRefused = {1040, 1044, 1045, 1142, 1143, 1053, 1290, 1317, 1927};
const std::set<int> kTimeout = {1205, 1969};
const std::set<int> kStatementLimit = {1461};

bool in(const std::set<int>& codes, int code) { return codes.count(code) != 0; }

}  // namespace

BOOST_AUTO_TEST_CASE(each_code_has_its_class) {
  for (int code : kNoAnswer) BOOST_TEST((classify_error(code) == ErrorClass::kNoAnswer), code);
  for (int code : kRefused) BOOST_TEST((classify_error(code) == ErrorClass::kRefused), code);
  for (int code : kTimeout) BOOST_TEST((classify_error(code) == ErrorClass::kTimeout), code);
  BOOST_TEST((classify_error(1461) == ErrorClass::kStatementLimit));
}

BOOST_AUTO_TEST_CASE(codes_not_listed_are_other) {
  for (int code : {0, 1, 1062, 1064, 1146, 1213, 1054, 2000, 2014, -1}) {
    BOOST_TEST((classify_error(code) == ErrorClass::kOther), code);
  }
}

BOOST_AUTO_TEST_CASE(the_table_lists_each_code_once_and_nothing_else) {
  std::vector<int> codes;
  for (const auto& entry : error_classes()) codes.push_back(entry.code);
  BOOST_TEST(codes.size() == 18u);
  std::sort(codes.begin(), codes.end());
  BOOST_TEST((std::adjacent_find(codes.begin(), codes.end()) == codes.end()));
  for (int code : codes) {
    BOOST_TEST((in(kNoAnswer, code) || in(kRefused, code) || in(kTimeout, code) ||
                in(kStatementLimit, code)),
               code);
  }
}

// Every code from 0 to 5000: the predicates are the lists the connection used before the table.
BOOST_AUTO_TEST_CASE(predicates_match_the_classes) {
  for (int code = 0; code <= 5000; ++code) {
    const bool no_answer = in(kNoAnswer, code);
    const bool timeout = in(kTimeout, code);
    BOOST_TEST(is_unavailable_error(code) == (no_answer || in(kRefused, code) || timeout), code);
    BOOST_TEST(is_server_state_error(code) == (timeout || in(kStatementLimit, code)), code);
    BOOST_TEST(is_timeout_error(code) == timeout, code);
    BOOST_TEST(is_no_answer_error(code) == no_answer, code);
  }
}
