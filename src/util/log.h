#pragma once
// Plain line logging to stderr. One write per line so lines from different threads never
// interleave. Each line starts with its time (ISO-8601, UTC, milliseconds), except when
// journald reads stderr: it stamps every line itself (with the unit), so the line is unchanged.
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace connector::util {

void log_info(std::string_view message);
void log_warning(std::string_view message);
void log_error(std::string_view message);

// Command-line tools report their one failure themselves: info and warning lines are dropped.
void log_errors_only();

// One line as written: "2026-11-27T09:39:34.123Z " when `at` is given, then the level
// ("error: ") and the message, then a newline.
std::string log_line(std::string_view level, std::string_view message,
                     std::optional<std::chrono::system_clock::time_point> at);

// Whether JOURNAL_STREAM's value ("<device>:<inode>", set by systemd for a unit whose output
// goes to the journal) names the stream with this device and inode. A child that inherited
// the variable but writes elsewhere (redirected) does not match.
bool is_journal_stream(const char* journal_stream, dev_t device, ino_t inode);

}  // namespace connector::util
