#include "util/log.h"

#include <unistd.h>

#include <atomic>
#include <string>

namespace connector::util {
namespace {

std::atomic<bool> errors_only{false};

void write_line(std::string_view level, std::string_view message) {
  std::string line;
  line.reserve(level.size() + message.size() + 2);
  line.append(level).append(message).push_back('\n');
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

bool log_due(std::atomic<std::int64_t>& last_s, std::chrono::seconds every) {
  const std::int64_t now_s = std::chrono::duration_cast<std::chrono::seconds>(
                                 std::chrono::steady_clock::now().time_since_epoch())
                                 .count();
  std::int64_t last = last_s.load();
  return now_s - last >= every.count() && last_s.compare_exchange_strong(last, now_s);
}

}  // namespace connector::util
