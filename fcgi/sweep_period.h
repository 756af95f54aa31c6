#pragma once
// How often a set of connections is checked against its deadline: a tenth of it, between 10 ms
// and 250 ms, so a connection is closed at most that late and an idle process wakes rarely.
#include <algorithm>
#include <chrono>

namespace connector::fcgi {

inline std::chrono::milliseconds sweep_period(std::chrono::milliseconds limit) {
  return std::clamp(limit / 10, std::chrono::milliseconds(10), std::chrono::milliseconds(250));
}

}  // namespace connector::fcgi
