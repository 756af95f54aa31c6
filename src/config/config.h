#pragma once
// Settings of the worker and the admin tool: a `key = value` file (path by flag), each key
// overridable by the environment as CONNECTOR_<KEY> (e.g. CONNECTOR_DB_PASSWORD), so secrets
// need not live in the file. See docs/configuration.md.
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace connector::config {

struct DatabaseSettings {
  std::string socket;  // unix socket path; when set, host and port are unused
  std::string host = "127.0.0.1";
  unsigned port = 3306;
  std::string name = "connector";
  std::string user = "connector";
  std::string password;
  unsigned connect_timeout_s = 2;
  unsigned read_timeout_s = 5;
};

struct WorkerSettings {
  std::string listen = "/run/connector/fcgi.sock";  // unix socket path, or host:port
  unsigned listen_mode = 0660;
  unsigned listen_backlog = 1024;
  unsigned threads = 8;
  unsigned reference_refresh_ms = 1000;
};

struct Config {
  WorkerSettings worker;
  DatabaseSettings db;
};

class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

using EnvLookup = std::function<std::optional<std::string>(const std::string& name)>;

// Parses the file text, then applies environment overrides. Throws ConfigError naming the line
// or variable at fault (never echoing a password).
Config parse_config(std::string_view text, const EnvLookup& env);

// Reads the file at path (empty: defaults only) and parses it with the process environment.
Config load_config(const std::string& path);

// One line for the log: every setting, the password masked.
std::string describe(const Config& config);

}  // namespace connector::config
