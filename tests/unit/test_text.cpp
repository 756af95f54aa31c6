// util::trim (util/text.h): what the configuration's lines, its endpoint lists and
// FCGI_WEB_SERVER_ADDRS are read with.
#define BOOST_TEST_MODULE text
#include <boost/test/unit_test.hpp>

#include "util/text.h"

using connector::util::trim;

BOOST_AUTO_TEST_CASE(blanks_at_either_end_go) {
  BOOST_TEST(trim("  threads = 8\t") == "threads = 8");
  BOOST_TEST(trim("db_name = connector\r") == "db_name = connector");  // a CRLF file's line
  BOOST_TEST(trim("\t 127.0.0.1:3306 ") == "127.0.0.1:3306");
}

BOOST_AUTO_TEST_CASE(blanks_inside_stay) {
  BOOST_TEST(trim(" a \t b ") == "a \t b");
  BOOST_TEST(trim("x") == "x");
}

BOOST_AUTO_TEST_CASE(nothing_but_blanks_is_empty) {
  BOOST_TEST(trim("").empty());
  BOOST_TEST(trim(" \t\r ").empty());
}

BOOST_AUTO_TEST_CASE(other_white_space_is_kept) {
  // A newline or a form feed is not a blank of a line: the reader splits lines before.
  BOOST_TEST(trim("\na\n") == "\na\n");
  BOOST_TEST(trim("\fa") == "\fa");
}
