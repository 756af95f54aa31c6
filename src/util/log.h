#pragma once
// Plain line logging to stderr (journald adds time and unit). One write per line so lines from
// different threads never interleave.
#include <string_view>

namespace connector::util {

void log_info(std::string_view message);
void log_warning(std::string_view message);
void log_error(std::string_view message);

// Command-line tools report their one failure themselves: info and warning lines are dropped.
void log_errors_only();

}  // namespace connector::util
