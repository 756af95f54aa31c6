#include "config/config.h"

#include "config/keys.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "util/text.h"
#include "util/unique_fd.h"

namespace connector::config {
namespace {

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

const Key* find_key(std::string_view name) {
  const auto all = keys();
  const auto found =
      std::find_if(all.begin(), all.end(), [&](const Key& k) { return k.name == name; });
  return found == all.end() ? nullptr : &*found;
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

std::string env_name(std::string_view key) {
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
    const std::string_view content = util::trim(strip_comment(line));
    if (content.empty()) continue;
    const auto eq = content.find('=');
    const std::string where = "line " + std::to_string(number);
    if (eq == std::string_view::npos) throw ConfigError(where + ": expected key = value");
    const std::string name(util::trim(content.substr(0, eq)));
    const Key* key = find_key(name);
    if (key == nullptr) throw ConfigError((where + ": unknown key ").append(name));
    try {
      set(*key, config, std::string(util::trim(content.substr(eq + 1))));
    } catch (const ConfigError& e) {
      throw ConfigError(where + ": " + e.what());
    }
  }
  for (const Key& key : keys()) {
    if (const auto value = env(env_name(key.name))) {
      try {
        set(key, config, *value);
      } catch (const ConfigError& e) {
        throw ConfigError(env_name(key.name) + ": " + e.what());
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
  if (own.db.password.empty() && own.db.write_password.empty() &&
      own.webhooks.db_password.empty()) {
    return;
  }
  std::ostringstream octal;
  octal << '0' << std::oct << (mode & 07777);
  throw ConfigError("config file " + path + " holds a password and is readable by everyone " +
                    "(mode " + octal.str() + "): run chmod 640 (or 600) on it, or move the " +
                    "password to CONNECTOR_DB_PASSWORD / CONNECTOR_DB_WRITE_PASSWORD / " +
                    "CONNECTOR_WEBHOOKS_DB_PASSWORD");
}

Config load_config(const std::string& path) {
  std::string text;
  if (!path.empty()) {
    // The mode is taken from the descriptor that is read: the file checked is the file used.
    const util::UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    struct stat info {};
    const bool read = fd && ::fstat(fd.get(), &info) == 0 && read_all(fd.get(), text);
    const int error = errno;
    if (!read) throw ConfigError("cannot read config file " + path + ": " + std::strerror(error));
    check_file_mode(path, info.st_mode, text);
  }
  return parse_config(text, [](const std::string& name) -> std::optional<std::string> {
    const char* value = std::getenv(name.c_str());
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  });
}

std::vector<std::pair<std::string, std::string>> parse_environment_file(std::string_view text) {
  std::vector<std::pair<std::string, std::string>> assignments;
  std::istringstream lines{std::string(text)};
  std::string line;
  for (int number = 1; std::getline(lines, line); ++number) {
    const std::string_view content = util::trim(line);
    if (content.empty() || content.front() == '#' || content.front() == ';') continue;
    const auto eq = content.find('=');
    const std::string_view key =
        eq == std::string_view::npos ? "" : util::trim(content.substr(0, eq));
    const bool name = !key.empty() && std::all_of(key.begin(), key.end(), [](char c) {
      return c == '_' || std::isalnum(static_cast<unsigned char>(c));
    });
    if (!name) {
      throw ConfigError("environment file line " + std::to_string(number) + ": expected KEY=VALUE");
    }
    std::string_view value = util::trim(content.substr(eq + 1));
    if (value.size() >= 2 && (value.front() == '"' || value.front() == '\'') &&
        value.back() == value.front()) {
      value = value.substr(1, value.size() - 2);
    }
    assignments.emplace_back(std::string(key), std::string(value));
  }
  return assignments;
}

std::string describe(const Config& c) {
  std::string out;
  for (const Key& key : keys()) {
    std::string value = value_text(key, c);
    // The account writes actually use (docs: "empty: db_user").
    if (key.name == "db_write_user" && value.empty()) value = c.db.user;
    const std::string shown = key.secret      ? (value.empty() ? "(empty)" : "(set)")
                              : value.empty() ? "(none)"
                                              : value;
    out += (out.empty() ? "" : " ") + std::string(key.name) + "=" + shown;
  }
  return out;
}

}  // namespace connector::config
