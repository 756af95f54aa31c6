#pragma once
// Progress of a long admin command for a person watching a terminal: rows done, rate and time
// left on one line rewritten in place, at most twice a second. With no stream (not a terminal:
// scripts, CI, logs) it prints nothing.
#include <chrono>
#include <cstdint>
#include <iosfwd>
#include <string>

namespace connector::admin {

class Progress {
 public:
  // `out` is null when nobody is watching; see for_stderr().
  Progress(std::string label, std::uint64_t total, std::ostream* out);
  // The stream to report on: stderr when it is a terminal, else none.
  static std::ostream* for_stderr();

  void advance(std::uint64_t rows);  // `rows` more are done
  void finish();                     // the last line, then a newline

 private:
  void print(bool final);

  std::string label_;
  std::uint64_t total_;
  std::uint64_t done_ = 0;
  std::ostream* out_;
  std::chrono::steady_clock::time_point started_;
  std::chrono::steady_clock::time_point last_print_;
};

// "8 min 14 s", "42 s", "1 h 03 min": a duration as a person reads it.
std::string human_duration(double seconds);

}  // namespace connector::admin
