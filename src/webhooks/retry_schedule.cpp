#include "webhooks/retry_schedule.h"

#include <algorithm>

namespace connector::webhooks {

milliseconds retry_delay(std::uint32_t attempt, double uniform) {
  // 1 s << 12 is past the cap already: no shift overflows.
  const std::uint32_t doublings = std::min<std::uint32_t>(attempt == 0 ? 0 : attempt - 1, 12);
  const auto step = std::min(kFirstRetry * (std::int64_t{1} << doublings), kLongestRetry);
  const double draw = std::clamp(uniform, 0.0, 1.0);
  const auto half = step / 2;
  return half + milliseconds(static_cast<std::int64_t>(static_cast<double>(half.count()) * draw));
}

bool is_failing(std::chrono::system_clock::time_point failing_since,
                std::chrono::system_clock::time_point now) {
  return now - failing_since >= kFailingAfter;
}

}  // namespace connector::webhooks
