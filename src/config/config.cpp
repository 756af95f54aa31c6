#include "config/config.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <sstream>

namespace connector::config {
namespace {

std::string_view trim(std::string_view s) {
  const auto first = s.find_first_not_of(" \t\r");
  if (first == std::string_view::npos) return {};
  const auto last = s.find_last_not_of(" \t\r");
  return s.substr(first, last - first + 1);
}

// '#' starts a comment at the start of a line or after white space, so a value may contain '#'
// ("db_password = ab#cd") but not " #".
std::string_view strip_comment(std::string_view line) {
  for (std::size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '#' && (i == 0 || line[i - 1] == ' ' || line[i - 1] == '\t')) {
      return line.substr(0, i);
    }
  }
  return line;
}

unsigned parse_unsigned(const std::string& key, const std::string& value, int base,
                        unsigned min_value, unsigned max_value) {
  // Digits only: std::stoul alone would also take a sign or leading white space.
  const bool digits = !value.empty() && std::all_of(value.begin(), value.end(), [base](char c) {
    return c >= '0' && c < (base == 8 ? '8' : ':');
  });
  std::size_t used = 0;
  unsigned long parsed = 0;
  try {
    parsed = std::stoul(value, &used, base);
  } catch (const std::exception&) {
    used = 0;
  }
  if (!digits || used != value.size() || parsed < min_value || parsed > max_value) {
    throw ConfigError(key + " must be a whole number from " + std::to_string(min_value) + " to " +
                      std::to_string(max_value));
  }
  return static_cast<unsigned>(parsed);
}

std::vector<DatabaseEndpoint> parse_endpoint_list(const std::string& key, std::string_view list) {
  std::vector<DatabaseEndpoint> endpoints;
  while (!trim(list).empty()) {
    const auto comma = list.find(',');
    const auto item = trim(list.substr(0, comma));
    list = comma == std::string_view::npos ? std::string_view{} : list.substr(comma + 1);
    const auto endpoint = parse_endpoint(item);
    if (!endpoint) {
      throw ConfigError(key + " must list unix:/path or host:port entries, separated by commas");
    }
    endpoints.push_back(*endpoint);
  }
  return endpoints;
}

// Every key the file may hold, bound to the field it sets.
using Setter = std::function<void(Config&, const std::string& key, const std::string& value)>;

Setter text(std::string DatabaseSettings::*field) {
  return [field](Config& c, const std::string&, const std::string& v) { c.db.*field = v; };
}
Setter number(unsigned DatabaseSettings::*field, unsigned min_value, unsigned max_value) {
  return [=](Config& c, const std::string& k, const std::string& v) {
    c.db.*field = parse_unsigned(k, v, 10, min_value, max_value);
  };
}
Setter number(unsigned WorkerSettings::*field, unsigned min_value, unsigned max_value,
              int base = 10) {
  return [=](Config& c, const std::string& k, const std::string& v) {
    c.worker.*field = parse_unsigned(k, v, base, min_value, max_value);
  };
}

const std::map<std::string, Setter>& setters() {
  static const std::map<std::string, Setter> kSetters = {
      {"listen", [](Config& c, const std::string&, const std::string& v) { c.worker.listen = v; }},
      {"listen_mode", number(&WorkerSettings::listen_mode, 0, 0777, 8)},
      {"listen_backlog", number(&WorkerSettings::listen_backlog, 1, 65535)},
      {"fcgi_read_timeout_ms", number(&WorkerSettings::fcgi_read_timeout_ms, 100, 600000)},
      {"processes", number(&WorkerSettings::processes, 1, 64)},
      {"threads", number(&WorkerSettings::threads, 1, 1024)},
      {"max_requests", number(&WorkerSettings::max_requests, 0, 4000000000u)},
      {"request_timeout_ms", number(&WorkerSettings::request_timeout_ms, 100, 600000)},
      {"slow_request_ms", number(&WorkerSettings::slow_request_ms, 0, 600000)},
      {"access_log",
       [](Config& c, const std::string&, const std::string& v) { c.worker.access_log = v; }},
      {"shutdown_timeout_s", number(&WorkerSettings::shutdown_timeout_s, 1, 3600)},
      {"reference_refresh_ms", number(&WorkerSettings::reference_refresh_ms, 0, 3600000)},
      {"new_accounts_per_minute", number(&WorkerSettings::new_accounts_per_minute, 0, 1000000)},
      {"db_socket", text(&DatabaseSettings::socket)},
      {"db_host", text(&DatabaseSettings::host)},
      {"db_port", number(&DatabaseSettings::port, 1, 65535)},
      {"db_name", text(&DatabaseSettings::name)},
      {"db_user", text(&DatabaseSettings::user)},
      {"db_password", text(&DatabaseSettings::password)},
      {"db_write_user", text(&DatabaseSettings::write_user)},
      {"db_write_password", text(&DatabaseSettings::write_password)},
      {"db_replicas", [](Config& c, const std::string& k,
                         const std::string& v) { c.db.replicas = parse_endpoint_list(k, v); }},
      {"db_connect_timeout_s", number(&DatabaseSettings::connect_timeout_s, 1, 600)},
      {"db_read_timeout_s", number(&DatabaseSettings::read_timeout_s, 1, 3600)},
      {"db_failback_s", number(&DatabaseSettings::failback_s, 1, 86400)},
  };
  return kSetters;
}

// The whole content of fd; false (errno set) when a read fails.
bool read_all(int fd, std::string& text) {
  char buffer[4096];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n > 0) {
      text.append(buffer, static_cast<std::size_t>(n));
    } else if (n == 0) {
      return true;
    } else if (errno != EINTR) {
      return false;
    }
  }
}

std::string env_name(const std::string& key) {
  std::string name = "CONNECTOR_";
  for (char c : key) name.push_back(static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
  return name;
}

}  // namespace

std::string DatabaseEndpoint::describe() const {
  return socket.empty() ? host + ":" + std::to_string(port) : "unix:" + socket;
}

std::optional<DatabaseEndpoint> parse_endpoint(std::string_view text) {
  if (text.starts_with("unix:")) {
    const auto path = text.substr(5);
    if (path.empty() || path[0] != '/') return std::nullopt;
    return DatabaseEndpoint{std::string(path), {}, 0};
  }
  const auto colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0) return std::nullopt;
  const auto port = text.substr(colon + 1);
  if (port.empty() || port.size() > 5 ||
      !std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return std::nullopt;
  }
  const unsigned number = static_cast<unsigned>(std::stoul(std::string(port)));
  if (number == 0 || number > 65535) return std::nullopt;
  return DatabaseEndpoint{{}, std::string(text.substr(0, colon)), number};
}

Config parse_config(std::string_view text, const EnvLookup& env) {
  Config config;
  std::istringstream lines{std::string(text)};
  std::string line;
  for (int number = 1; std::getline(lines, line); ++number) {
    const std::string_view content = trim(strip_comment(line));
    if (content.empty()) continue;
    const auto eq = content.find('=');
    const std::string where = "line " + std::to_string(number);
    if (eq == std::string_view::npos) throw ConfigError(where + ": expected key = value");
    const std::string key(trim(content.substr(0, eq)));
    const auto setter = setters().find(key);
    if (setter == setters().end()) throw ConfigError(where + ": unknown key " + key);
    try {
      setter->second(config, key, std::string(trim(content.substr(eq + 1))));
    } catch (const ConfigError& e) {
      throw ConfigError(where + ": " + e.what());
    }
  }
  for (const auto& [key, setter] : setters()) {
    if (const auto value = env(env_name(key))) {
      try {
        setter(config, key, *value);
      } catch (const ConfigError& e) {
        throw ConfigError(env_name(key) + ": " + e.what());
      }
    }
  }
  return config;
}

void check_file_mode(const std::string& path, unsigned mode, std::string_view text) {
  if ((mode & S_IROTH) == 0) return;
  const auto no_environment = [](const std::string&) -> std::optional<std::string> {
    return std::nullopt;
  };
  const Config own = parse_config(text, no_environment);
  if (own.db.password.empty() && own.db.write_password.empty()) return;
  std::ostringstream octal;
  octal << '0' << std::oct << (mode & 07777);
  throw ConfigError("config file " + path + " holds a password and is readable by everyone " +
                    "(mode " + octal.str() + "): run chmod 640 (or 600) on it, or move the " +
                    "password to CONNECTOR_DB_PASSWORD / CONNECTOR_DB_WRITE_PASSWORD");
}

Config load_config(const std::string& path) {
  std::string text;
  if (!path.empty()) {
    // The mode is taken from the descriptor that is read: the file checked is the file used.
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    struct stat info {};
    const bool read = fd >= 0 && ::fstat(fd, &info) == 0 && read_all(fd, text);
    const int error = errno;
    if (fd >= 0) ::close(fd);
    if (!read) throw ConfigError("cannot read config file " + path + ": " + std::strerror(error));
    check_file_mode(path, info.st_mode, text);
  }
  return parse_config(text, [](const std::string& name) -> std::optional<std::string> {
    const char* value = std::getenv(name.c_str());
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  });
}

std::string describe(const Config& c) {
  std::string replicas;
  for (const auto& r : c.db.replicas) replicas += (replicas.empty() ? "" : ",") + r.describe();
  auto secret = [](const std::string& value) { return value.empty() ? "(empty)" : "(set)"; };
  std::ostringstream out;
  out << "listen=" << c.worker.listen << " listen_mode=0" << std::oct << c.worker.listen_mode
      << std::dec << " listen_backlog=" << c.worker.listen_backlog
      << " fcgi_read_timeout_ms=" << c.worker.fcgi_read_timeout_ms
      << " processes=" << c.worker.processes << " threads=" << c.worker.threads
      << " max_requests=" << c.worker.max_requests
      << " request_timeout_ms=" << c.worker.request_timeout_ms
      << " slow_request_ms=" << c.worker.slow_request_ms << " access_log=" << c.worker.access_log
      << " shutdown_timeout_s=" << c.worker.shutdown_timeout_s
      << " reference_refresh_ms=" << c.worker.reference_refresh_ms
      << " new_accounts_per_minute=" << c.worker.new_accounts_per_minute
      << " db=" << c.db.primary().describe()
      << " db_replicas=" << (replicas.empty() ? "(none)" : replicas) << " db_name=" << c.db.name
      << " db_user=" << c.db.user << " db_password=" << secret(c.db.password)
      << " db_write_user=" << (c.db.write_user.empty() ? c.db.user : c.db.write_user)
      << " db_write_password=" << secret(c.db.write_password)
      << " db_connect_timeout_s=" << c.db.connect_timeout_s
      << " db_read_timeout_s=" << c.db.read_timeout_s << " db_failback_s=" << c.db.failback_s;
  return out.str();
}

}  // namespace connector::config
