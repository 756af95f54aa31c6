#include "util/log.h"

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <ctime>

namespace connector::util {
namespace {

std::atomic<bool> errors_only{false};

// Decided once: stderr does not change under a running process.
bool stderr_is_journal() {
  static const bool journal = [] {
    struct stat st {};
    return ::fstat(STDERR_FILENO, &st) == 0 &&
           is_journal_stream(std::getenv("JOURNAL_STREAM"), st.st_dev, st.st_ino);
  }();
  return journal;
}

void write_line(std::string_view level, std::string_view message) {
  std::optional<std::chrono::system_clock::time_point> at;
  if (!stderr_is_journal()) at = std::chrono::system_clock::now();
  const std::string line = log_line(level, message, at);
  // A short write to stderr is not worth a retry loop; the log is best effort.
  [[maybe_unused]] const auto written = ::write(STDERR_FILENO, line.data(), line.size());
}

}  // namespace

void log_info(std::string_view message) {
  if (!errors_only) write_line("info: ", message);
}
void log_warning(std::string_view message) {
  if (!errors_only) write_line("warning: ", message);
}
void log_error(std::string_view message) { write_line("error: ", message); }
void log_errors_only() { errors_only = true; }

std::string log_line(std::string_view level, std::string_view message,
                     std::optional<std::chrono::system_clock::time_point> at) {
  std::string line;
  line.reserve(25 + level.size() + message.size() + 1);
  if (at) {
    const auto ms = std::chrono::floor<std::chrono::milliseconds>(*at).time_since_epoch().count();
    const std::time_t seconds = static_cast<std::time_t>(ms >= 0 ? ms / 1000 : (ms - 999) / 1000);
    std::tm utc{};
    ::gmtime_r(&seconds, &utc);
    char stamp[32];
    const std::size_t date = std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &utc);
    std::snprintf(stamp + date, sizeof stamp - date, ".%03dZ ",
                  static_cast<int>(ms - std::int64_t{seconds} * 1000));
    line.append(stamp);
  }
  line.append(level).append(message).push_back('\n');
  return line;
}

bool is_journal_stream(const char* journal_stream, dev_t device, ino_t inode) {
  if (journal_stream == nullptr) return false;
  std::uintmax_t dev = 0;
  std::uintmax_t ino = 0;
  char end = 0;
  // Exactly two decimal numbers around one colon.
  if (std::sscanf(journal_stream, "%ju:%ju%c", &dev, &ino, &end) != 2) return false;
  return dev == static_cast<std::uintmax_t>(device) && ino == static_cast<std::uintmax_t>(inode);
}

}  // namespace connector::util
