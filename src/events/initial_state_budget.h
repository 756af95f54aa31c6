#pragma once
// How many initial states (a record as it is now, for a new subscriber whose record channel is
// empty) the publisher sends nchan per second. Any client can ask for one (a new stream of a
// record whose channel is empty), and nchan keeps each in its shared memory (2.06 KiB for a
// record) for a minute (connector-events-nginx.conf, /publish/snapshot, a location named before
// "initial state" was the word and kept for deployed configurations):
// the budget bounds what clients can make nchan hold, whatever their number, to kPerSecond x
// 60 s x 2.06 KiB (24 MiB of the shipped 64). A request past it is dropped and counted; its
// subscriber gets the record at its next change. One publisher thread uses it: no sharing.
#include <chrono>
#include <cstdint>

namespace connector::events {

class InitialStateBudget {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr std::uint32_t kPerSecond = 200;

  explicit InitialStateBudget(std::uint32_t per_second = kPerSecond) : per_second_(per_second) {}

  // One initial state of the current second's budget: false when it is spent.
  bool take(Clock::time_point now) {
    if (now - window_start_ >= std::chrono::seconds(1)) {
      window_start_ = now;
      taken_ = 0;
    }
    if (taken_ >= per_second_) return false;
    ++taken_;
    return true;
  }

 private:
  std::uint32_t per_second_;
  Clock::time_point window_start_{};
  std::uint32_t taken_ = 0;
};

}  // namespace connector::events
