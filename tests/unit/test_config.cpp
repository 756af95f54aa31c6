#define BOOST_TEST_MODULE test_config
#include <sys/stat.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "config/config.h"
#include "config/keys.h"

using namespace connector::config;

namespace {

// A fake environment: a fixed map, recording every name asked for.
class FakeEnv {
 public:
  explicit FakeEnv(std::map<std::string, std::string> values = {}) : values_(std::move(values)) {}

  EnvLookup lookup() {
    return [this](const std::string& name) -> std::optional<std::string> {
      asked_.insert(name);
      const auto it = values_.find(name);
      if (it == values_.end()) return std::nullopt;
      return it->second;
    };
  }

  const std::set<std::string>& asked() const { return asked_; }

 private:
  std::map<std::string, std::string> values_;
  std::set<std::string> asked_;
};

Config parse(const std::string& text, std::map<std::string, std::string> env = {}) {
  FakeEnv fake(std::move(env));
  return parse_config(text, fake.lookup());
}

// The ConfigError message, or "<no error>".
std::string error_of(const std::string& text, std::map<std::string, std::string> env = {}) {
  try {
    parse(text, std::move(env));
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "<no error>";
}

const char* const kAllKeysFile =
    "listen = 127.0.0.1:9000\n"
    "listen_mode = 0600\n"
    "listen_backlog = 64\n"
    "fcgi_read_timeout_ms = 750\n"
    "listen_allow_any = yes\n"
    "fcgi_max_params_bytes = 8192\n"
    "threads = 3\n"
    "reference_refresh_ms = 250\n"
    "new_accounts_per_minute = 30\n"
    "events_publisher = /run/connector-events-publish/publish.sock\n"
    "events_poll_ms = 50\n"
    "events_gap_wait_ms = 500\n"
    "events_cursor_file = /var/lib/connector/events-cursor\n"
    "db_socket = /run/mysqld/mysqld.sock\n"
    "db_host = db.internal\n"
    "db_port = 3307\n"
    "db_name = bridge\n"
    "db_user = reader\n"
    "db_password = hunter2\n"
    "db_connect_timeout_s = 7\n"
    "db_read_timeout_s = 11\n"
    "processes = 5\n"
    "max_requests = 1000\n"
    "request_timeout_ms = 1500\n"
    "slow_request_ms = 200\n"
    "access_log = /var/log/connector/access.log\n"
    "shutdown_timeout_s = 9\n"
    "db_replicas = unix:/run/replica.sock, replica2:3308\n"
    "db_write_user = writer\n"
    "db_write_password = w-secret\n"
    "db_failback_s = 45\n"
    "db_replica_max_lag_s = 4\n";

}  // namespace

BOOST_AUTO_TEST_CASE(empty_file_and_environment_give_the_defaults) {
  const Config c = parse("");
  BOOST_TEST(c.worker.listen == "/run/connector/fcgi.sock");
  BOOST_TEST(c.worker.listen_mode == 0660u);
  BOOST_TEST(c.worker.listen_backlog == 1024u);
  BOOST_TEST(c.worker.fcgi_read_timeout_ms == 5000u);
  BOOST_TEST(c.worker.threads == 8u);
  BOOST_TEST(c.worker.reference_refresh_ms == 1000u);
  BOOST_TEST(c.worker.new_accounts_per_minute == 300u);
  BOOST_TEST(c.db.socket == "");
  BOOST_TEST(c.db.host == "127.0.0.1");
  BOOST_TEST(c.db.port == 3306u);
  BOOST_TEST(c.db.name == "connector");
  BOOST_TEST(c.db.user == "connector");
  BOOST_TEST(c.db.password == "");
  BOOST_TEST(c.db.connect_timeout_s == 2u);
  BOOST_TEST(c.db.read_timeout_s == 5u);
}

BOOST_AUTO_TEST_CASE(every_key_of_the_file_sets_its_field) {
  const Config c = parse(kAllKeysFile);
  BOOST_TEST(c.worker.listen == "127.0.0.1:9000");
  BOOST_TEST(c.worker.listen_mode == 0600u);
  BOOST_TEST(c.worker.listen_backlog == 64u);
  BOOST_TEST(c.worker.fcgi_read_timeout_ms == 750u);
  BOOST_TEST(c.worker.threads == 3u);
  BOOST_TEST(c.worker.reference_refresh_ms == 250u);
  BOOST_TEST(c.worker.new_accounts_per_minute == 30u);
  BOOST_TEST(c.db.socket == "/run/mysqld/mysqld.sock");
  BOOST_TEST(c.db.host == "db.internal");
  BOOST_TEST(c.db.port == 3307u);
  BOOST_TEST(c.db.name == "bridge");
  BOOST_TEST(c.db.user == "reader");
  BOOST_TEST(c.db.password == "hunter2");
  BOOST_TEST(c.db.connect_timeout_s == 7u);
  BOOST_TEST(c.db.read_timeout_s == 11u);
  BOOST_TEST(c.worker.processes == 5u);
  BOOST_TEST(c.worker.max_requests == 1000u);
  BOOST_TEST(c.worker.request_timeout_ms == 1500u);
  BOOST_TEST(c.worker.slow_request_ms == 200u);
  BOOST_TEST(c.worker.access_log == "/var/log/connector/access.log");
  BOOST_TEST(c.worker.shutdown_timeout_s == 9u);
  BOOST_REQUIRE(c.db.replicas.size() == 2u);
  BOOST_TEST(c.db.replicas[0].describe() == "unix:/run/replica.sock");
  BOOST_TEST(c.db.replicas[1].describe() == "replica2:3308");
  BOOST_TEST(c.db.write_user == "writer");
  BOOST_TEST(c.db.write_password == "w-secret");
  BOOST_TEST(c.db.failback_s == 45u);
  BOOST_TEST(c.db.replica_max_lag_s == 4u);
}

BOOST_AUTO_TEST_CASE(the_key_table_covers_the_file_the_environment_and_describe) {
  // kAllKeysFile sets every key of the table to a value other than its default, so a key added
  // to the table without a line there fails here.
  const Config all = parse(kAllKeysFile);
  const Config defaults = parse("");
  const std::string described = describe(all);
  for (const auto& key : connector::config::keys()) {
    BOOST_TEST_CONTEXT(key.name) {
      const std::string value = connector::config::value_text(key, all);
      BOOST_TEST(value != connector::config::value_text(key, defaults));
      // The environment sets the same field to the same value.
      std::string name = "CONNECTOR_";
      for (char ch : key.name) name.push_back(static_cast<char>(std::toupper(ch)));
      const Config from_env = parse("", {{name, value}});
      BOOST_TEST(connector::config::value_text(key, from_env) == value);
      const std::string shown = key.secret ? "(set)" : value;
      const std::string pair = std::string(key.name) + "=" + shown;
      const bool listed = described.starts_with(pair + " ") ||
                          described.find(" " + pair + " ") != std::string::npos ||
                          described.ends_with(" " + pair);
      BOOST_TEST(listed);
    }
  }
}

BOOST_AUTO_TEST_CASE(replica_lists_must_be_endpoints) {
  for (const char* bad :
       {"replica", "unix:relative.sock", "host:0", "host:70000", "host:", ":3306", "a:1,,b"}) {
    BOOST_TEST_CONTEXT(bad) {
      BOOST_CHECK_THROW(parse(std::string("db_replicas = ") + bad + "\n"), ConfigError);
    }
  }
  BOOST_TEST(parse("db_replicas =\n").db.replicas.empty());
}

BOOST_AUTO_TEST_CASE(every_key_is_overridable_as_connector_upper_key) {
  FakeEnv env;
  parse_config("", env.lookup());
  const std::set<std::string> expected = {
      "CONNECTOR_LISTEN",
      "CONNECTOR_LISTEN_MODE",
      "CONNECTOR_LISTEN_BACKLOG",
      "CONNECTOR_FCGI_READ_TIMEOUT_MS",
      "CONNECTOR_LISTEN_ALLOW_ANY",
      "CONNECTOR_FCGI_MAX_PARAMS_BYTES",
      "CONNECTOR_THREADS",
      "CONNECTOR_REFERENCE_REFRESH_MS",
      "CONNECTOR_NEW_ACCOUNTS_PER_MINUTE",
      "CONNECTOR_EVENTS_PUBLISHER",
      "CONNECTOR_EVENTS_POLL_MS",
      "CONNECTOR_EVENTS_GAP_WAIT_MS",
      "CONNECTOR_EVENTS_CURSOR_FILE",
      "CONNECTOR_DB_SOCKET",
      "CONNECTOR_DB_HOST",
      "CONNECTOR_DB_PORT",
      "CONNECTOR_DB_NAME",
      "CONNECTOR_DB_USER",
      "CONNECTOR_DB_PASSWORD",
      "CONNECTOR_DB_CONNECT_TIMEOUT_S",
      "CONNECTOR_DB_READ_TIMEOUT_S",
      "CONNECTOR_PROCESSES",
      "CONNECTOR_MAX_REQUESTS",
      "CONNECTOR_REQUEST_TIMEOUT_MS",
      "CONNECTOR_SLOW_REQUEST_MS",
      "CONNECTOR_ACCESS_LOG",
      "CONNECTOR_SHUTDOWN_TIMEOUT_S",
      "CONNECTOR_DB_REPLICAS",
      "CONNECTOR_DB_WRITE_USER",
      "CONNECTOR_DB_WRITE_PASSWORD",
      "CONNECTOR_DB_FAILBACK_S",
      "CONNECTOR_DB_REPLICA_MAX_LAG_S",
  };
  BOOST_TEST(env.asked() == expected, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(every_key_from_the_environment_sets_its_field) {
  const Config c = parse("", {
                                 {"CONNECTOR_LISTEN", "0.0.0.0:9001"},
                                 {"CONNECTOR_LISTEN_MODE", "0640"},
                                 {"CONNECTOR_LISTEN_BACKLOG", "65535"},
                                 {"CONNECTOR_FCGI_READ_TIMEOUT_MS", "600000"},
                                 {"CONNECTOR_THREADS", "1024"},
                                 {"CONNECTOR_REFERENCE_REFRESH_MS", "0"},
                                 {"CONNECTOR_DB_SOCKET", "/tmp/db.sock"},
                                 {"CONNECTOR_DB_HOST", "10.0.0.5"},
                                 {"CONNECTOR_DB_PORT", "65535"},
                                 {"CONNECTOR_DB_NAME", "n"},
                                 {"CONNECTOR_DB_USER", "u"},
                                 {"CONNECTOR_DB_PASSWORD", "pw from env"},
                                 {"CONNECTOR_DB_CONNECT_TIMEOUT_S", "600"},
                                 {"CONNECTOR_DB_READ_TIMEOUT_S", "3600"},
                             });
  BOOST_TEST(c.worker.listen == "0.0.0.0:9001");
  BOOST_TEST(c.worker.listen_mode == 0640u);
  BOOST_TEST(c.worker.listen_backlog == 65535u);
  BOOST_TEST(c.worker.fcgi_read_timeout_ms == 600000u);
  BOOST_TEST(c.worker.threads == 1024u);
  BOOST_TEST(c.worker.reference_refresh_ms == 0u);
  BOOST_TEST(c.db.socket == "/tmp/db.sock");
  BOOST_TEST(c.db.host == "10.0.0.5");
  BOOST_TEST(c.db.port == 65535u);
  BOOST_TEST(c.db.name == "n");
  BOOST_TEST(c.db.user == "u");
  BOOST_TEST(c.db.password == "pw from env");
  BOOST_TEST(c.db.connect_timeout_s == 600u);
  BOOST_TEST(c.db.read_timeout_s == 3600u);
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

BOOST_AUTO_TEST_CASE(describe_masks_the_password) {
  const Config with_password = parse(kAllKeysFile, {{"CONNECTOR_DB_PASSWORD", "Tr0ub4dor&3"}});
  const std::string text = describe(with_password);
  BOOST_TEST(text.find("Tr0ub4dor") == std::string::npos);
  BOOST_TEST(text.find("hunter2") == std::string::npos);
  BOOST_TEST(text.find("db_password=(set)") != std::string::npos);
  BOOST_TEST(text.find("(empty)") == std::string::npos);
}

BOOST_AUTO_TEST_CASE(describe_lists_every_setting) {
  const std::string all = describe(parse(kAllKeysFile));
  BOOST_TEST(all ==
             "listen=127.0.0.1:9000 listen_mode=0600 listen_backlog=64 fcgi_read_timeout_ms=750 "
             "listen_allow_any=yes fcgi_max_params_bytes=8192 processes=5 threads=3 "
             "max_requests=1000 request_timeout_ms=1500 slow_request_ms=200 "
             "access_log=/var/log/connector/access.log shutdown_timeout_s=9 "
             "reference_refresh_ms=250 new_accounts_per_minute=30 "
             "events_publisher=/run/connector-events-publish/publish.sock events_poll_ms=50 "
             "events_gap_wait_ms=500 events_cursor_file=/var/lib/connector/events-cursor "
             "db_socket=/run/mysqld/mysqld.sock db_host=db.internal db_port=3307 "
             "db_replicas=unix:/run/replica.sock,replica2:3308 db_name=bridge db_user=reader "
             "db_password=(set) db_write_user=writer db_write_password=(set) "
             "db_connect_timeout_s=7 db_read_timeout_s=11 db_failback_s=45 "
             "db_replica_max_lag_s=4");
  BOOST_TEST(all.find("w-secret") == std::string::npos);
  BOOST_TEST(
      describe(parse("")) ==
      "listen=/run/connector/fcgi.sock listen_mode=0660 listen_backlog=1024 "
      "fcgi_read_timeout_ms=5000 listen_allow_any=no fcgi_max_params_bytes=65536 processes=2 "
      "threads=8 max_requests=0 request_timeout_ms=3000 slow_request_ms=1000 "
      "access_log=stderr shutdown_timeout_s=30 reference_refresh_ms=1000 "
      "new_accounts_per_minute=300 events_publisher=(none) events_poll_ms=200 "
      "events_gap_wait_ms=2000 events_cursor_file=(none) db_socket=(none) db_host=127.0.0.1 "
      "db_port=3306 "
      "db_replicas=(none) db_name=connector db_user=connector "
      "db_password=(empty) db_write_user=connector db_write_password=(empty) "
      "db_connect_timeout_s=2 db_read_timeout_s=5 db_failback_s=30 "
      "db_replica_max_lag_s=10");
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
      "/ CONNECTOR_DB_WRITE_PASSWORD";
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
                   "CONNECTOR_DB_WRITE_PASSWORD");
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

BOOST_AUTO_TEST_CASE(a_switch_is_yes_or_no) {
  BOOST_TEST(parse("listen_allow_any = yes\n").worker.listen_allow_any);
  BOOST_TEST(parse("listen_allow_any = on\n").worker.listen_allow_any);
  BOOST_TEST(!parse("listen_allow_any = no\n").worker.listen_allow_any);
  BOOST_TEST(!parse("").worker.listen_allow_any);
  BOOST_TEST(error_of("listen_allow_any = maybe\n") ==
             "line 1: listen_allow_any must be yes or no");
}
