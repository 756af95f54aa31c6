#pragma once
// Which changes read from the feed may be published (events/) or delivered (webhooks/) now. seq is
// taken when a change is written, not when its transaction commits, so the feed can show seq 12
// before seq 11 (two writers), and a rolled-back change leaves a hole that never fills. Changes go
// out in seq order: up to the first hole, and past it only once it has stayed open for `wait`.
#include <chrono>
#include <cstdint>
#include <optional>
#include <span>

namespace connector::db {

class FeedOrder {
 public:
  using Clock = std::chrono::steady_clock;

  explicit FeedOrder(std::chrono::milliseconds wait) : wait_(wait) {}

  struct Verdict {
    std::size_t publish = 0;        // how many of the changes read, from the first, go out now
    std::uint64_t passed_over = 0;  // feed positions given up on among them
  };
  // seqs: the changes read after `cursor`, ascending.
  Verdict publishable(std::uint64_t cursor, std::span<const std::uint64_t> seqs,
                      Clock::time_point now);

 private:
  struct Hole {
    std::uint64_t first;  // the missing seq
    Clock::time_point since;
  };
  std::chrono::milliseconds wait_;
  std::optional<Hole> hole_;
};

}  // namespace connector::db
