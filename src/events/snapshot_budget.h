#pragma once
// How many record states (snapshots) the publisher sends nchan per second. Any client can ask
// for one (a new stream of a record whose channel is empty), and nchan keeps each in its shared
// memory (2.06 KiB for a record) for a minute (connector-events-http.conf, /publish/snapshot):
// the budget bounds what clients can make nchan hold, whatever their number, to kPerSecond x
// 60 s x 2.06 KiB (24 MiB of the shipped 64). A request past it is dropped and counted; its
// subscriber gets the record at its next change. One publisher thread uses it: no sharing.
#include <chrono>
#include <cstdint>

namespace connector::events {

class SnapshotBudget {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr std::uint32_t kPerSecond = 200;

  explicit SnapshotBudget(std::uint32_t per_second = kPerSecond) : per_second_(per_second) {}

  // One snapshot of the current second's budget: false when it is spent.
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
