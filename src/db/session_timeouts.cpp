#include "db/session_timeouts.h"

#include <algorithm>
#include <cstdint>

namespace connector::db {
namespace {

std::int64_t whole_ms(Duration d) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
}

}  // namespace

unsigned client_read_timeout_s(unsigned configured_s, unsigned budget_ms) {
  if (budget_ms == 0) return configured_s;
  return std::min(configured_s, std::max(1u, budget_ms / 1000));
}

unsigned client_connect_timeout_s(Duration left, unsigned configured_s) {
  return static_cast<unsigned>(
      std::clamp<std::int64_t>((whole_ms(left) + 999) / 1000, 1, std::max(1u, configured_s)));
}

unsigned session_statement_timeout_ms(unsigned budget_ms, unsigned read_timeout_s, Duration left) {
  const unsigned longest = std::min(budget_ms, read_timeout_s * 1000 - kServerFirstMs);
  return static_cast<unsigned>(
      std::clamp<std::int64_t>(whole_ms(left), 1, static_cast<std::int64_t>(longest)));
}

bool statement_timeout_changes(unsigned set_ms, unsigned wanted_ms) {
  const bool unset = set_ms == 0;
  const bool too_long = wanted_ms + kStatementTimeoutSlackMs < set_ms;
  const bool cut_short = set_ms + kStatementTimeoutSlackMs < wanted_ms;
  return unset || too_long || cut_short;
}

std::string statement_timeout_sql(unsigned timeout_ms) {
  const unsigned lock_wait_s = std::max(1u, (timeout_ms + 999) / 1000);
  return "SET SESSION max_statement_time = " + std::to_string(timeout_ms / 1000) + "." +
         std::to_string(timeout_ms % 1000 + 1000).substr(1) +
         ", lock_wait_timeout = " + std::to_string(lock_wait_s) +
         ", innodb_lock_wait_timeout = " + std::to_string(lock_wait_s);
}

bool waited_out_read_timeout(Duration waited, unsigned read_timeout_s) {
  return waited >= std::chrono::seconds(read_timeout_s) - kHungMargin;
}

}  // namespace connector::db
