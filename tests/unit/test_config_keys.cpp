// The configuration keys: every key's default, its line in the file, its environment variable
// and its place in describe (the key table, src/config/keys.cpp).
#define BOOST_TEST_MODULE test_config_keys
#include <boost/test/unit_test.hpp>
#include <cctype>
#include <set>
#include <string>

#include "config/keys.h"
#include "config_fakes.h"

using namespace connector::config;
using namespace connector::config::fakes;

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
  BOOST_TEST(c.webhooks.db_user == "deliverer");
  BOOST_TEST(c.webhooks.db_password == "h-secret");
  BOOST_TEST(c.webhooks.allow_hosts == "127.0.0.1,hooks.internal");
  BOOST_TEST(c.webhooks.ca_file == "/etc/connector/ca.pem");
  BOOST_TEST(c.webhooks.timeout_ms == 2000u);
  BOOST_TEST(c.webhooks.connect_timeout_ms == 500u);
  BOOST_TEST(c.webhooks.poll_ms == 20u);
  BOOST_TEST(c.webhooks.lease_ms == 4000u);
  BOOST_TEST(c.webhooks.metrics_file == "/var/lib/prom/connector_webhooks.prom");
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
      "CONNECTOR_WEBHOOKS_DB_USER",
      "CONNECTOR_WEBHOOKS_DB_PASSWORD",
      "CONNECTOR_WEBHOOKS_ALLOW_HOSTS",
      "CONNECTOR_WEBHOOKS_CA_FILE",
      "CONNECTOR_WEBHOOKS_TIMEOUT_MS",
      "CONNECTOR_WEBHOOKS_CONNECT_TIMEOUT_MS",
      "CONNECTOR_WEBHOOKS_POLL_MS",
      "CONNECTOR_WEBHOOKS_LEASE_MS",
      "CONNECTOR_WEBHOOKS_METRICS_FILE",
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
             "db_replica_max_lag_s=4 webhooks_db_user=deliverer webhooks_db_password=(set) "
             "webhooks_allow_hosts=127.0.0.1,hooks.internal "
             "webhooks_ca_file=/etc/connector/ca.pem webhooks_timeout_ms=2000 "
             "webhooks_connect_timeout_ms=500 webhooks_poll_ms=20 webhooks_lease_ms=4000 "
             "webhooks_metrics_file=/var/lib/prom/connector_webhooks.prom");
  BOOST_TEST(all.find("h-secret") == std::string::npos);
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
      "db_replica_max_lag_s=10 webhooks_db_user=connector_webhooks webhooks_db_password=(empty) "
      "webhooks_allow_hosts=(none) webhooks_ca_file=(none) webhooks_timeout_ms=15000 "
      "webhooks_connect_timeout_ms=3000 webhooks_poll_ms=50 webhooks_lease_ms=10000 "
      "webhooks_metrics_file=(none)");
}
