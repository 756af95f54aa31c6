#include "db/new_row_budget.h"

#include <algorithm>

#include "metrics/scoreboard.h"
#include "util/process_shared.h"

namespace connector::db {
namespace {

util::ProcessShared<NewRowWindow> shared_window;

}  // namespace

NewRowWindow& new_row_window() { return shared_window.get(); }

NewRowWindow& create_shared_new_row_window() { return shared_window.create_shared(); }

void NewRowBudget::take(std::chrono::steady_clock::time_point now) {
  if (per_minute_ == 0) return;
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(now.time_since_epoch());
  const auto now_s = static_cast<std::uint64_t>(seconds.count());
  const std::uint64_t minute = now_s / 60;
  std::uint64_t word = window_.word.load(std::memory_order_relaxed);
  for (;;) {
    // The window only moves forward: a thread whose `now` is older than the stored minute (it
    // was preempted, or stalled) counts against the stored one instead of starting that
    // minute's count again. The clock never steps, so the stored minute is never ahead of it.
    const std::uint64_t current = std::max(word >> 32, minute);
    const std::uint64_t taken = (word >> 32) == current ? (word & 0xffffffffu) : 0;
    if (taken >= per_minute_) {
      metrics::increment(&metrics::Scoreboard::deposit_accounts_refused);
      throw NewRowCapReached(static_cast<std::uint32_t>((current + 1) * 60 - now_s));
    }
    const std::uint64_t next = (current << 32) | (taken + 1);
    if (window_.word.compare_exchange_weak(word, next, std::memory_order_relaxed)) return;
  }
}

}  // namespace connector::db

static_assert(std::atomic<std::uint64_t>::is_always_lock_free,
              "the shared window needs address-free atomics");
