#pragma once
// Settings of the worker and the admin tool: a `key = value` file (path by flag), each key
// overridable by the environment as CONNECTOR_<KEY> (e.g. CONNECTOR_DB_PASSWORD), so secrets
// need not live in the file. Every key: docs/operations.md, section 4.
#include <chrono>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace connector::config {

// Where a MariaDB server listens: a unix socket, or host and port.
struct DatabaseEndpoint {
  std::string socket;  // when set, host and port are unused
  std::string host = "127.0.0.1";
  unsigned port = 3306;

  std::string describe() const;  // "unix:/path" or "host:port"
};

// "unix:/path/to.sock" or "host:port"; nullopt when malformed.
std::optional<DatabaseEndpoint> parse_endpoint(std::string_view text);

// The most read replicas a worker takes (db_replicas).
inline constexpr std::size_t kMaxReplicas = 15;

struct DatabaseSettings {
  // The primary: takes the one write and is the last resort for reads.
  std::string socket;
  std::string host = "127.0.0.1";
  unsigned port = 3306;
  // Read replicas, tried in order before the primary.
  std::vector<DatabaseEndpoint> replicas;
  std::string name = "connector";
  std::string user = "connector";  // the account for reads
  std::string password;
  std::string write_user;  // the account for the deposit-account insert; empty: `user`
  std::string write_password;
  unsigned connect_timeout_s = 2;
  unsigned read_timeout_s = 5;
  unsigned failback_s = 30;  // how long reads stay on a fallback server before trying the first
  // A replica further behind than this is out of rotation (db/replica_monitor.h); 0: never.
  unsigned replica_max_lag_s = 10;

  DatabaseEndpoint primary() const { return {socket, host, port}; }
};

struct WorkerSettings {
  std::string listen = "/run/connector/fcgi.sock";  // unix socket path, or host:port
  unsigned listen_mode = 0660;
  unsigned listen_backlog = 1024;
  // On TCP: start without FCGI_WEB_SERVER_ADDRS, taking requests from any host (a trusted
  // network only).
  bool listen_allow_any = false;
  // How long a FastCGI connection may take to deliver its request (and stay idle when kept
  // open, and block one write); past it the worker closes it and the thread is free again.
  unsigned fcgi_read_timeout_ms = 5000;
  // The most bytes of FastCGI parameters one request may carry (fastcgi/fcgi_screen.h).
  unsigned fcgi_max_params_bytes = 65536;
  unsigned processes = 2;  // worker processes, each with `threads` threads
  unsigned threads = 8;
  unsigned max_requests = 0;             // a process is replaced after this many requests; 0: never
  unsigned request_timeout_ms = 3000;    // time budget of one request, enforced in the database
  unsigned slow_request_ms = 1000;       // requests slower than this are logged as slow
  std::string access_log = "stderr";     // a file path, "stderr" or "off"
  unsigned shutdown_timeout_s = 30;      // how long stopping waits for requests in flight
  unsigned reference_refresh_ms = 1000;  // reload of the refreshed reference and supply
  // Deposit addresses recorded per minute by all processes together; past it, a request
  // that needs a new row is a 503 (rows already recorded are still answered). 0: no cap.
  unsigned new_accounts_per_minute = 300;
  // Server-sent events (src/events/): nchan's publisher socket; empty: no events.
  std::string events_publisher;
  unsigned events_poll_ms = 200;       // how often the publisher reads the change feed
  unsigned events_gap_wait_ms = 2000;  // how long it waits for a hole in the feed to fill
  std::string events_cursor_file;      // where it keeps the last change published; empty: memory

  // request_timeout_ms: the budget of one request's database work, and of one background round.
  std::chrono::milliseconds request_budget() const {
    return std::chrono::milliseconds(request_timeout_ms);
  }
};

// The webhook deliverer (connector-webhooks, src/webhooks/deliverer.h): it reads the same file
// and uses the primary of DatabaseSettings with its own account.
struct WebhookSettings {
  std::string db_user = "connector_webhooks";
  std::string db_password;
  // Hosts a receiver's URL may name over http, and that may resolve to loopback or private
  // addresses (tests, private networks): comma-separated, lowercase.
  std::string allow_hosts;
  std::string
      ca_file;  // the CA bundle receivers' certificates are checked against; empty: the system's
  unsigned timeout_ms = 15000;         // one delivery, connection included
  unsigned connect_timeout_ms = 3000;  // its connection (TCP and TLS)
  unsigned poll_ms = 50;               // how often the deliverer reads the change feed
  unsigned lease_ms = 10000;           // a holder that has not renewed for this long is replaced
  std::string metrics_file;            // Prometheus textfile, rewritten every 5 s; empty: none
};

struct Config {
  WorkerSettings worker;
  DatabaseSettings db;
  WebhookSettings webhooks;
};

class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

using EnvLookup = std::function<std::optional<std::string>(const std::string& name)>;

// Parses the file text, then applies environment overrides. Throws ConfigError naming the line
// or variable at fault (never echoing a password).
Config parse_config(std::string_view text, const EnvLookup& env);

// Reads the file at path (empty: defaults only), checks its mode (check_file_mode) and parses it
// with the process environment.
Config load_config(const std::string& path);

// A file that holds a password (a non-empty db_password or db_write_password line) must not be
// readable by others (mode & 0004): throws ConfigError, one line naming the file and the fix.
// Group-readable is fine (the service runs as the file's group). `text` is the file's content,
// `mode` its st_mode.
void check_file_mode(const std::string& path, unsigned mode, std::string_view text);

// One line for the log: every setting, the password masked.
std::string describe(const Config& config);

// The assignments of a systemd EnvironmentFile (connector.env): KEY=VALUE lines, blank lines
// and lines starting with # or ; ignored, a value in matching single or double quotes taken
// without them. Throws ConfigError naming the line (not its content) when one is not KEY=VALUE.
std::vector<std::pair<std::string, std::string>> parse_environment_file(std::string_view text);

}  // namespace connector::config
