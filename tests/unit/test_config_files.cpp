// The configuration's files: the shipped example, the mode of a file that holds a password
// (load_config, check_file_mode) and the environment file systemd reads.
#define BOOST_TEST_MODULE test_config_files
#include <sys/stat.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "config_fakes.h"

using namespace connector::config;
using namespace connector::config::fakes;

BOOST_AUTO_TEST_CASE(the_shipped_example_file_parses_to_the_defaults) {
  std::ifstream file(std::string(CONNECTOR_SOURCE_DIR) + "/fcgi/connector.conf.example");
  BOOST_REQUIRE(file);
  std::ostringstream text;
  text << file.rdbuf();
  const auto example = parse(text.str(), {});
  const auto defaults = parse("", {});
  BOOST_TEST(example.worker.listen == defaults.worker.listen);
  BOOST_TEST(example.worker.listen_mode == defaults.worker.listen_mode);
  BOOST_TEST(example.worker.threads == defaults.worker.threads);
  BOOST_TEST(example.db.host == defaults.db.host);
  BOOST_TEST(example.db.port == defaults.db.port);
  BOOST_TEST(example.db.password.empty());
  BOOST_TEST(example.db.read_timeout_s == defaults.db.read_timeout_s);
}

// --- the mode of a file that holds a password ---------------------------------------------

namespace {

// The ConfigError message of check_file_mode, or "<no error>".
std::string mode_error(unsigned mode, const std::string& text) {
  try {
    check_file_mode("/etc/connector/connector.conf", mode, text);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "<no error>";
}

// The ConfigError message of load_config(path), or "<no error>".
std::string error_of_load(const std::string& path) {
  try {
    load_config(path);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "<no error>";
}

// A file in the temporary directory with this content and mode, removed at the end.
class TempFile {
 public:
  TempFile(const std::string& text, mode_t mode) {
    char name[] = "/tmp/connector-test-config-XXXXXX";
    const int fd = ::mkstemp(name);
    BOOST_REQUIRE(fd >= 0);
    path_ = name;
    BOOST_REQUIRE(::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()));
    BOOST_REQUIRE(::fchmod(fd, mode) == 0);
    ::close(fd);
  }
  ~TempFile() { ::unlink(path_.c_str()); }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;

  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace

BOOST_AUTO_TEST_CASE(a_password_file_readable_by_others_is_refused) {
  const std::string refused =
      "config file /etc/connector/connector.conf holds a password and is readable by everyone "
      "(mode 0644): run chmod 640 (or 600) on it, or move the password to CONNECTOR_DB_PASSWORD "
      "/ CONNECTOR_DB_WRITE_PASSWORD / CONNECTOR_WEBHOOKS_DB_PASSWORD";
  std::string refused_0604 = refused;
  refused_0604.replace(refused.find("0644"), 4, "0604");
  struct Case {
    unsigned mode;
    std::string text;
    std::string error;
  };
  const std::vector<Case> cases = {
      {0100644, "db_password = hunter2\n", refused},
      {0100644, "db_write_password = w-secret\n", refused},
      {0100644, kAllKeysFile, refused},
      {0100604, "db_password = hunter2\n", refused_0604},
      // Group-readable or private: the service reads it as the file's group.
      {0100640, "db_password = hunter2\n", "<no error>"},
      {0100600, kAllKeysFile, "<no error>"},
      {0100660, "db_write_password = w-secret\n", "<no error>"},
      {0100644, "webhooks_db_password = h-secret\n", refused},
      // No password in the file (empty, commented out, or only in the environment): any mode.
      {0100644, "", "<no error>"},
      {0100644, "db_password =\ndb_write_password =\nthreads = 3\n", "<no error>"},
      {0100644, "# db_password = hunter2\n", "<no error>"},
      {0100666, "db_user = reader\n", "<no error>"},
  };
  for (const auto& c : cases) {
    BOOST_TEST_CONTEXT(std::oct << c.mode << " " << c.text) {
      BOOST_TEST(mode_error(c.mode, c.text) == c.error);
    }
  }
}

BOOST_AUTO_TEST_CASE(the_refusal_never_echoes_the_password) {
  const std::string message = mode_error(0100644, "db_password = s3cr3t-Value\n");
  BOOST_TEST(message != "<no error>");
  BOOST_TEST(message.find("s3cr3t") == std::string::npos);
}

BOOST_AUTO_TEST_CASE(load_config_checks_the_mode_of_the_file_it_reads) {
  const TempFile open_file("db_password = hunter2\nthreads = 3\n", 0644);
  try {
    load_config(open_file.path());
    BOOST_FAIL("a world-readable file with a password was accepted");
  } catch (const ConfigError& e) {
    BOOST_TEST(std::string(e.what()) ==
               "config file " + open_file.path() +
                   " holds a password and is readable by everyone (mode 0644): run chmod 640 (or "
                   "600) on it, or move the password to CONNECTOR_DB_PASSWORD / "
                   "CONNECTOR_DB_WRITE_PASSWORD / CONNECTOR_WEBHOOKS_DB_PASSWORD");
  }
  const TempFile group_file("db_password = hunter2\nthreads = 3\n", 0640);
  BOOST_TEST(load_config(group_file.path()).worker.threads == 3u);
  const TempFile public_file("threads = 4\n", 0644);
  BOOST_TEST(load_config(public_file.path()).worker.threads == 4u);
}

BOOST_AUTO_TEST_CASE(an_unreadable_config_file_says_why) {
  BOOST_TEST(error_of_load("/nonexistent/connector.conf") ==
             "cannot read config file /nonexistent/connector.conf: No such file or directory");
  BOOST_TEST(error_of_load("/tmp") == "cannot read config file /tmp: Is a directory");
}

BOOST_AUTO_TEST_CASE(the_shipped_example_file_is_installed_with_an_accepted_mode) {
  // cmake/packaging.cmake installs it 0640 (root:connector); with a password filled in, that is
  // what load_config accepts.
  std::ifstream file(std::string(CONNECTOR_SOURCE_DIR) + "/fcgi/connector.conf.example");
  BOOST_REQUIRE(file);
  std::ostringstream text;
  text << file.rdbuf();
  BOOST_TEST(mode_error(0100640, text.str() + "db_password = filled-in\n") == "<no error>");
  BOOST_TEST(mode_error(0100644, text.str()) == "<no error>");
}

BOOST_AUTO_TEST_CASE(an_environment_file_is_read_as_systemd_reads_it) {
  const auto assignments = parse_environment_file(
      "# secrets\n"
      "CONNECTOR_DB_PASSWORD=s3cr3t=x\n"
      "\n"
      "; also a comment\n"
      "  CONNECTOR_THREADS = 3 \n"
      "CONNECTOR_DB_USER=\"reader one\"\n"
      "CONNECTOR_DB_NAME='bridge'\n");
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"CONNECTOR_DB_PASSWORD", "s3cr3t=x"},
      {"CONNECTOR_THREADS", "3"},
      {"CONNECTOR_DB_USER", "reader one"},
      {"CONNECTOR_DB_NAME", "bridge"}};
  BOOST_TEST((assignments == expected));
}

BOOST_AUTO_TEST_CASE(a_bad_environment_file_line_is_named_not_echoed) {
  for (const std::string text : {"s3cr3t-Value\n", "=s3cr3t-Value\n", "KEY WITH SPACE=s3cr3t\n"}) {
    BOOST_TEST_CONTEXT(text) {
      try {
        parse_environment_file("# first\n" + text);
        BOOST_FAIL("no error");
      } catch (const ConfigError& e) {
        BOOST_TEST(std::string(e.what()) == "environment file line 2: expected KEY=VALUE");
      }
    }
  }
}
