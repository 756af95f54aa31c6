#include "admin/progress.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>

namespace connector::admin {
namespace {

constexpr auto kPrintInterval = std::chrono::milliseconds(500);

// 1234567 -> "1,234,567"
std::string grouped(std::uint64_t n) {
  std::string digits = std::to_string(n), out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i != 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

}  // namespace

std::string human_duration(double seconds) {
  const auto total = static_cast<long long>(std::llround(std::max(seconds, 0.0)));
  char text[32];
  if (total < 60) {
    std::snprintf(text, sizeof text, "%lld s", total);
  } else if (total < 3600) {
    std::snprintf(text, sizeof text, "%lld min %02lld s", total / 60, total % 60);
  } else {
    std::snprintf(text, sizeof text, "%lld h %02lld min", total / 3600, total % 3600 / 60);
  }
  return text;
}

Progress::Progress(std::string label, std::uint64_t total, std::ostream* out)
    : label_(std::move(label)),
      total_(total),
      out_(out),
      started_(std::chrono::steady_clock::now()),
      last_print_(started_) {}

std::ostream* Progress::for_stderr() { return ::isatty(STDERR_FILENO) ? &std::cerr : nullptr; }

void Progress::advance(std::uint64_t rows) {
  done_ += rows;
  if (out_ != nullptr && std::chrono::steady_clock::now() - last_print_ >= kPrintInterval) {
    print(false);
  }
}

void Progress::finish() {
  if (out_ == nullptr) return;
  print(true);
  *out_ << "\n" << std::flush;
}

void Progress::print(bool final) {
  const auto now = std::chrono::steady_clock::now();
  last_print_ = now;
  const double seconds = std::chrono::duration<double>(now - started_).count();
  const double rate = seconds > 0 ? static_cast<double>(done_) / seconds : 0;
  *out_ << "\r" << label_ << ": " << grouped(done_) << " / " << grouped(total_) << " rows ("
        << (total_ != 0 ? done_ * 100 / total_ : 100) << " %), "
        << grouped(static_cast<std::uint64_t>(rate)) << " rows/s, ";
  if (final) {
    *out_ << "took " << human_duration(seconds);
  } else {
    const double left = rate > 0 ? static_cast<double>(total_ - done_) / rate : 0;
    *out_ << human_duration(left) << " left";
  }
  *out_ << "   " << std::flush;  // spaces wipe the tail of a longer previous line
}

}  // namespace connector::admin
