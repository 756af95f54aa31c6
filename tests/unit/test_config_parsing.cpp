// Reading the configuration text: comments and spacing, which value wins, the forms of numbers,
// switches and replica lists, and errors that name the line or variable but never a password.
#define BOOST_TEST_MODULE test_config_parsing
#include <boost/test/unit_test.hpp>
#include <string>

#include "config_fakes.h"

using namespace connector::config;
using namespace connector::config::fakes;

BOOST_AUTO_TEST_CASE(replica_lists_must_be_endpoints) {
  for (const char* bad :
       {"replica", "unix:relative.sock", "host:0", "host:70000", "host:", ":3306", "a:1,,b"}) {
    BOOST_TEST_CONTEXT(bad) {
      BOOST_CHECK_THROW(parse(std::string("db_replicas = ") + bad + "\n"), ConfigError);
    }
  }
  BOOST_TEST(parse("db_replicas =\n").db.replicas.empty());
}

BOOST_AUTO_TEST_CASE(comments_blank_lines_and_spacing_are_ignored) {
  const Config c = parse(
      "# a comment line\n"
      "\n"
      "   \n"
      "\t# an indented comment\n"
      "threads=4   # a trailing comment\n"
      "  db_name   =   spaced  \n"
      "db_user\t=\tTabbed\r\n"
      "db_host = h\r\n"
      "\n");
  BOOST_TEST(c.worker.threads == 4u);
  BOOST_TEST(c.db.name == "spaced");
  BOOST_TEST(c.db.user == "Tabbed");
  BOOST_TEST(c.db.host == "h");
  BOOST_TEST(c.worker.listen_backlog == 1024u);  // untouched
}

BOOST_AUTO_TEST_CASE(a_later_line_wins_over_an_earlier_one) {
  BOOST_TEST(parse("threads = 2\nthreads = 5\n").worker.threads == 5u);
}

BOOST_AUTO_TEST_CASE(the_environment_wins_over_the_file) {
  const Config c = parse("threads = 4\ndb_password = from-file\ndb_host = file-host\n",
                         {{"CONNECTOR_THREADS", "16"}, {"CONNECTOR_DB_PASSWORD", "from-env"}});
  BOOST_TEST(c.worker.threads == 16u);
  BOOST_TEST(c.db.password == "from-env");
  BOOST_TEST(c.db.host == "file-host");  // no variable: the file's value stays
}

BOOST_AUTO_TEST_CASE(db_password_from_the_environment_alone) {
  BOOST_TEST(parse("", {{"CONNECTOR_DB_PASSWORD", "p@ss w0rd=#1"}}).db.password == "p@ss w0rd=#1");
}

BOOST_AUTO_TEST_CASE(listen_mode_is_octal) {
  const struct {
    std::string text;
    unsigned mode;
  } cases[] = {{"0666", 0666}, {"666", 0666},  {"0660", 0660},
               {"0", 0},       {"0777", 0777}, {"0600", 0600}};
  for (const auto& c : cases) {
    BOOST_TEST_CONTEXT(c.text) {
      BOOST_TEST(parse("listen_mode = " + c.text + "\n").worker.listen_mode == c.mode);
    }
  }
}

BOOST_AUTO_TEST_CASE(file_errors_name_the_line) {
  const struct {
    std::string text, message;
  } cases[] = {
      {"threads = 4\n# fine\nthreadz = 4\n", "line 3: unknown key threadz"},
      {"THREADS = 4\n", "line 1: unknown key THREADS"},
      {"\nthreads 4\n", "line 2: expected key = value"},
      {"db_password hunter2\n", "line 1: expected key = value"},
      {"threads = 0\n", "line 1: threads must be a whole number from 1 to 1024"},
      {"threads = 1025\n", "line 1: threads must be a whole number from 1 to 1024"},
      {"threads = -1\n", "line 1: threads must be a whole number from 1 to 1024"},
      {"threads = four\n", "line 1: threads must be a whole number from 1 to 1024"},
      {"threads = 4.0\n", "line 1: threads must be a whole number from 1 to 1024"},
      {"threads = 0x10\n", "line 1: threads must be a whole number from 1 to 1024"},
      {"threads =\n", "line 1: threads must be a whole number from 1 to 1024"},
      {"threads = 18446744073709551617\n", "line 1: threads must be a whole number from 1 to 1024"},
      {"threads = 4294967300\n", "line 1: threads must be a whole number from 1 to 1024"},
      {"db_port = 70000\n", "line 1: db_port must be a whole number from 1 to 65535"},
      {"db_port = 0\n", "line 1: db_port must be a whole number from 1 to 65535"},
      {"listen_backlog = 0\n", "line 1: listen_backlog must be a whole number from 1 to 65535"},
      {"reference_refresh_ms = 3600001\n",
       "line 1: reference_refresh_ms must be a whole number from 0 to 3600000"},
      {"db_connect_timeout_s = 0\n",
       "line 1: db_connect_timeout_s must be a whole number from 1 to 600"},
      {"db_read_timeout_s = 3601\n",
       "line 1: db_read_timeout_s must be a whole number from 1 to 3600"},
      {"listen_mode = 01000\n", "line 1: listen_mode must be a whole number from 0 to 511"},
      {"listen_mode = 0668\n", "line 1: listen_mode must be a whole number from 0 to 511"},
  };
  for (const auto& c : cases) {
    BOOST_TEST_CONTEXT(c.text) { BOOST_TEST(error_of(c.text) == c.message); }
  }
}

BOOST_AUTO_TEST_CASE(a_bad_environment_value_names_the_variable) {
  const struct {
    std::string name, value, message;
  } cases[] = {
      {"CONNECTOR_THREADS", "abc",
       "CONNECTOR_THREADS: threads must be a whole number from 1 to 1024"},
      {"CONNECTOR_THREADS", "0",
       "CONNECTOR_THREADS: threads must be a whole number from 1 to 1024"},
      {"CONNECTOR_DB_PORT", "70000",
       "CONNECTOR_DB_PORT: db_port must be a whole number from 1 to 65535"},
      {"CONNECTOR_DB_PORT", "",
       "CONNECTOR_DB_PORT: db_port must be a whole number from 1 to 65535"},
      {"CONNECTOR_LISTEN_MODE", "999",
       "CONNECTOR_LISTEN_MODE: listen_mode must be a whole number from 0 to 511"},
  };
  for (const auto& c : cases) {
    BOOST_TEST_CONTEXT(c.name << "=" << c.value) {
      BOOST_TEST(error_of("", {{c.name, c.value}}) == c.message);
    }
  }
}

BOOST_AUTO_TEST_CASE(errors_never_echo_a_password) {
  // A mistyped key or a line without '=' must not put the secret into the log.
  for (const std::string text : {"db_pasword = s3cr3t-Value\n", "db_password: s3cr3t-Value\n",
                                 "db_password = ok\ns3cr3t-Value\n"}) {
    BOOST_TEST_CONTEXT(text) {
      const std::string message = error_of(text);
      BOOST_TEST(message != "<no error>");
      BOOST_TEST(message.find("s3cr3t") == std::string::npos);
    }
  }
}

BOOST_AUTO_TEST_CASE(hash_inside_a_value_is_kept_but_hash_after_space_is_a_comment) {
  BOOST_TEST(parse("db_password = ab#cd\n", {}).db.password == "ab#cd");
  BOOST_TEST(parse("db_password = ab #cd\n", {}).db.password == "ab");
}

BOOST_AUTO_TEST_CASE(numbers_from_the_environment_are_digits_only) {
  for (const char* bad : {"+4", " 4", "4 ", "-4", "0x4"}) {
    BOOST_CHECK_THROW(parse("", {{"CONNECTOR_THREADS", bad}}), connector::config::ConfigError);
  }
  BOOST_CHECK_THROW(parse("listen_mode = 0668\n", {}), connector::config::ConfigError);
}

BOOST_AUTO_TEST_CASE(a_switch_is_yes_or_no) {
  BOOST_TEST(parse("listen_allow_any = yes\n").worker.listen_allow_any);
  BOOST_TEST(parse("listen_allow_any = on\n").worker.listen_allow_any);
  BOOST_TEST(!parse("listen_allow_any = no\n").worker.listen_allow_any);
  BOOST_TEST(!parse("").worker.listen_allow_any);
  BOOST_TEST(error_of("listen_allow_any = maybe\n") ==
             "line 1: listen_allow_any must be yes or no");
}
