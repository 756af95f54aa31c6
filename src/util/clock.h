#pragma once
// Wall-clock time as the logs and /status show it: unix milliseconds.
#include <chrono>
#include <cstdint>

namespace connector::util {

inline std::int64_t unix_ms_now() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace connector::util
