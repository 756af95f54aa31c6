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

}  // namespace connector::util
