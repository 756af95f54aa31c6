#include "config/config.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
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
      {"threads", number(&WorkerSettings::threads, 1, 1024)},
      {"reference_refresh_ms", number(&WorkerSettings::reference_refresh_ms, 0, 3600000)},
      {"db_socket", text(&DatabaseSettings::socket)},
      {"db_host", text(&DatabaseSettings::host)},
      {"db_port", number(&DatabaseSettings::port, 1, 65535)},
      {"db_name", text(&DatabaseSettings::name)},
      {"db_user", text(&DatabaseSettings::user)},
      {"db_password", text(&DatabaseSettings::password)},
      {"db_connect_timeout_s", number(&DatabaseSettings::connect_timeout_s, 1, 600)},
      {"db_read_timeout_s", number(&DatabaseSettings::read_timeout_s, 1, 3600)},
  };
  return kSetters;
}

std::string env_name(const std::string& key) {
  std::string name = "CONNECTOR_";
  for (char c : key) name.push_back(static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
  return name;
}

}  // namespace

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

Config load_config(const std::string& path) {
  std::string text;
  if (!path.empty()) {
    std::ifstream file(path);
    if (!file) throw ConfigError("cannot read config file " + path);
    std::ostringstream content;
    content << file.rdbuf();
    text = content.str();
  }
  return parse_config(text, [](const std::string& name) -> std::optional<std::string> {
    const char* value = std::getenv(name.c_str());
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  });
}

std::string describe(const Config& c) {
  std::ostringstream out;
  out << "listen=" << c.worker.listen << " listen_mode=0" << std::oct << c.worker.listen_mode
      << std::dec << " listen_backlog=" << c.worker.listen_backlog
      << " threads=" << c.worker.threads
      << " reference_refresh_ms=" << c.worker.reference_refresh_ms << " db="
      << (c.db.socket.empty() ? c.db.host + ":" + std::to_string(c.db.port) : "unix:" + c.db.socket)
      << " db_name=" << c.db.name << " db_user=" << c.db.user
      << " db_password=" << (c.db.password.empty() ? "(empty)" : "(set)")
      << " db_connect_timeout_s=" << c.db.connect_timeout_s
      << " db_read_timeout_s=" << c.db.read_timeout_s;
  return out.str();
}

}  // namespace connector::config
