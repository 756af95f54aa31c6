#pragma once
// Wall-clock time as the logs and /status show it: unix milliseconds; durations in seconds;
// deadlines.
#include <chrono>
#include <cstdint>
#include <string>

namespace connector::util {

inline std::int64_t unix_ms_now() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// The same in microseconds (the change feed's and the webhook queues' times).
inline std::int64_t unix_us_now() { return unix_ms_now() * 1000; }

// CLOCK_MONOTONIC in milliseconds: the same clock for every process of the host (leases).
inline std::int64_t monotonic_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// The deadline of work that starts now and may take `budget` (steady clock, as db::Connection's).
inline std::chrono::steady_clock::time_point deadline_from_now(std::chrono::milliseconds budget) {
  return std::chrono::steady_clock::now() + budget;
}

// Milliseconds (not negative) as seconds with three decimals, exactly: "12.345".
inline std::string seconds_text(std::int64_t ms) {
  return std::to_string(ms / 1000) + "." + std::to_string(ms % 1000 + 1000).substr(1);
}

}  // namespace connector::util
