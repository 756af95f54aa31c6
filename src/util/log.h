#pragma once
// Plain line logging to stderr (journald adds time and unit). One write per line so lines from
// different threads never interleave.
#include <string_view>

namespace connector::util {

void log_info(std::string_view message);
void log_warning(std::string_view message);
void log_error(std::string_view message);

}  // namespace connector::util
