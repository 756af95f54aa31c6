#include "db/feed_order.h"

namespace connector::db {

FeedOrder::Verdict FeedOrder::publishable(std::uint64_t cursor, std::span<const std::uint64_t> seqs,
                                          Clock::time_point now) {
  Verdict verdict;
  std::uint64_t expected = cursor + 1;
  for (const std::uint64_t seq : seqs) {
    if (seq != expected) {
      if (!hole_ || hole_->first != expected) hole_ = Hole{expected, now};
      if (now - hole_->since < wait_) return verdict;
      verdict.passed_over += seq - expected;  // waited long enough: given up
    }
    hole_.reset();
    ++verdict.publish;
    expected = seq + 1;
  }
  return verdict;
}

}  // namespace connector::db
