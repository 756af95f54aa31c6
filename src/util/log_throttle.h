#pragma once
// At most one line about one kind of event per period, however many threads of the process see
// the event, so that a flood of it cannot fill the disk (the counters say how many there were).
// One throttle per kind of line, kept beside the code that writes the line.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <limits>

namespace connector::util {

class LogThrottle {
 public:
  explicit constexpr LogThrottle(std::chrono::seconds every) : every_s_(every.count()) {}
  LogThrottle(const LogThrottle&) = delete;
  LogThrottle& operator=(const LogThrottle&) = delete;

  // True when a line is due now; the next is then due `every` later.
  bool due() {
    return due_at(std::chrono::duration_cast<std::chrono::seconds>(
                      std::chrono::steady_clock::now().time_since_epoch())
                      .count());
  }

  // The same at steady-clock second `now_s` (for tests). Of threads that race, one wins.
  bool due_at(std::int64_t now_s) {
    std::int64_t last = last_s_.load();
    if (last != kNever && now_s - last < every_s_) return false;
    return last_s_.compare_exchange_strong(last, now_s);
  }

 private:
  static constexpr std::int64_t kNever = std::numeric_limits<std::int64_t>::min();
  const std::int64_t every_s_;
  std::atomic<std::int64_t> last_s_{kNever};
};

}  // namespace connector::util
