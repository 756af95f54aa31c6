#pragma once
// Plain line logging to stderr (journald adds time and unit). One write per line so lines from
// different threads never interleave.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <string_view>

namespace connector::util {

void log_info(std::string_view message);
void log_warning(std::string_view message);
void log_error(std::string_view message);

// True when a line about one kind of event is due: at most one per `every`, however many
// threads see the event, so that a flood of it cannot fill the disk. `last_s` holds the
// steady-clock second of the last line (start it at -1000).
bool log_due(std::atomic<std::int64_t>& last_s, std::chrono::seconds every);

// Command-line tools report their one failure themselves: info and warning lines are dropped.
void log_errors_only();

}  // namespace connector::util
