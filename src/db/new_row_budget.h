#pragma once
// The cap on new deposit_accounts rows per minute (config: new_accounts_per_minute). Minutes
// are counted on CLOCK_MONOTONIC (steady_clock): one clock for all the host's processes, and
// one that is never stepped, so the window can only move forward.
// Every valid recipient makes a permanent row that the chain watchers must follow, so the rate
// of new rows is bounded on the worker as well as per client in nginx: a client that rotates
// addresses (an IPv6 /64 after another) still cannot add more than the cap. The minute's count
// lives in a shared anonymous mapping made by the master before it forks, so the cap holds for
// all the worker's processes together (per host: each host has its own).
#include <atomic>
#include <chrono>
#include <cstdint>
#include <stdexcept>

namespace connector::db {

// The current minute and the rows taken in it, packed in one word: minute << 32 | rows.
struct NewRowWindow {
  std::atomic<std::uint64_t> word{0};
};

// The process's window: the shared one in the worker, a private one elsewhere (tests, tools).
NewRowWindow& new_row_window();
// Maps a fresh shared window and makes it this process's (and its future children's).
NewRowWindow& create_shared_new_row_window();

// A request that needs a new row past the cap: answered 503 with Retry-After.
class NewRowCapReached : public std::runtime_error {
 public:
  explicit NewRowCapReached(std::uint32_t retry_after_s)
      : std::runtime_error("the cap on new deposit addresses per minute is reached"),
        retry_after_s_(retry_after_s) {}
  std::uint32_t retry_after_s() const { return retry_after_s_; }

 private:
  std::uint32_t retry_after_s_;
};

class NewRowBudget {
 public:
  // per_minute 0: no cap.
  NewRowBudget(unsigned per_minute, NewRowWindow& window)
      : per_minute_(per_minute), window_(window) {}

  // Takes one row of the current minute's budget, or throws NewRowCapReached with the seconds
  // left until the next minute.
  void take(std::chrono::steady_clock::time_point now = std::chrono::steady_clock::now());

 private:
  unsigned per_minute_;
  NewRowWindow& window_;
};

}  // namespace connector::db
