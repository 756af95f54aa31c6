#include "request_screen.h"

#include <sys/ioctl.h>
#include <sys/socket.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <string>

#include "metrics/scoreboard.h"
#include "util/log.h"
#include "util/log_throttle.h"

namespace connector::fcgi {
namespace {

// A line per reason at most every 10 s.
std::array<util::LogThrottle, metrics::kFcgiRejectionReasons> rejection_lines{
    util::LogThrottle(std::chrono::seconds(10)), util::LogThrottle(std::chrono::seconds(10)),
    util::LogThrottle(std::chrono::seconds(10)), util::LogThrottle(std::chrono::seconds(10))};

Screened verdict(Screened::Outcome outcome) { return {outcome, fastcgi::FcgiRejection::kNone, {}}; }

}  // namespace

RequestScreen::RequestScreen(fastcgi::FcgiLimits limits)
    : limits_(limits), buffer_(fastcgi::max_request_bytes(limits) + 1) {}

Screened RequestScreen::look(int fd) {
  const ssize_t n = ::recv(fd, buffer_.data(), buffer_.size(), MSG_PEEK | MSG_DONTWAIT);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
    return verdict(Screened::Outcome::kIncomplete);  // nothing queued yet
  }
  if (n <= 0)
    return verdict(Screened::Outcome::kClosed);  // closed with nothing queued, or an error
  const fastcgi::FcgiScreen screen =
      fastcgi::screen_fcgi_request({buffer_.data(), static_cast<std::size_t>(n)}, limits_);
  switch (screen.verdict) {
    case fastcgi::FcgiVerdict::kRequest:
      return verdict(Screened::Outcome::kRequest);
    case fastcgi::FcgiVerdict::kIncomplete: {
      Screened incomplete = verdict(Screened::Outcome::kIncomplete);
      incomplete.need_bytes = screen.need_bytes;
      return incomplete;
    }
    case fastcgi::FcgiVerdict::kAborted:
      return verdict(Screened::Outcome::kClosed);
    case fastcgi::FcgiVerdict::kRejected:
      break;
  }
  return {Screened::Outcome::kRejected, screen.reason, screen.detail};
}

std::size_t RequestScreen::queued_bytes(int fd) {
  int queued = 0;
  if (::ioctl(fd, FIONREAD, &queued) != 0 || queued < 0) return 0;
  return static_cast<std::size_t>(queued);
}

void note_rejection(const Screened& screened, std::chrono::milliseconds read_timeout) {
  const auto index = static_cast<std::size_t>(screened.reason) - 1;
  metrics::scoreboard().fcgi_rejected[index].fetch_add(1, std::memory_order_relaxed);
  if (!rejection_lines[index].due()) return;
  const std::string what = !screened.detail.empty() ? std::string(screened.detail)
                                                    : "sent no complete request within " +
                                                          std::to_string(read_timeout.count()) +
                                                          " ms (fcgi_read_timeout_ms)";
  util::log_warning("closed a FastCGI connection before libfcgi read it (" +
                    std::string(fastcgi::rejection_label(screened.reason)) + "): " + what +
                    "; counted in connector_fcgi_rejected_total, logged once per 10 s");
}

}  // namespace connector::fcgi
