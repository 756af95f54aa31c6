#include "util/log.h"

#include <unistd.h>

#include <string>

namespace connector::util {
namespace {

void write_line(std::string_view level, std::string_view message) {
  std::string line;
  line.reserve(level.size() + message.size() + 2);
  line.append(level).append(message).push_back('\n');
  // A short write to stderr is not worth a retry loop; the log is best effort.
  [[maybe_unused]] const auto written = ::write(STDERR_FILENO, line.data(), line.size());
}

}  // namespace

void log_info(std::string_view message) { write_line("info: ", message); }
void log_warning(std::string_view message) { write_line("warning: ", message); }
void log_error(std::string_view message) { write_line("error: ", message); }

}  // namespace connector::util
