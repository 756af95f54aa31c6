#pragma once
// Screens the request queued on a connection (fastcgi/fcgi_screen.h) before libfcgi reads a byte of
// it. The bytes are only peeked at (recv with MSG_PEEK), so libfcgi then reads the request that
// was screened, all of it already queued: it never waits on a slow peer for it and never sees
// a record the screen refused. A look never waits: a request not whole yet waits in PendingRequests
// (pending_requests.h), which holds no pool thread.
#include <chrono>
#include <cstdint>
#include <string_view>
#include <vector>

#include "fastcgi/fcgi_screen.h"

namespace connector::fcgi {

struct Screened {
  enum class Outcome {
    kRequest,     // a whole request within bounds is queued: libfcgi may read it
    kIncomplete,  // well formed so far: wait for the rest, within the read deadline
    kClosed,      // the peer closed, or abandoned its request: close quietly
    kRejected,    // close at once; counted by reason
  };
  Outcome outcome = Outcome::kClosed;
  fastcgi::FcgiRejection reason = fastcgi::FcgiRejection::kNone;
  std::string_view detail;     // for the log, with kRejected (a static string)
  std::size_t need_bytes = 0;  // kIncomplete: the bytes that must be queued before it can change
};

class RequestScreen {
 public:
  // One per thread: it owns the buffer the bytes are peeked into.
  explicit RequestScreen(fastcgi::FcgiLimits limits);

  // What connection `fd` has queued, at this moment.
  Screened look(int fd);
  // How many bytes connection `fd` has queued (one ioctl, nothing copied).
  static std::size_t queued_bytes(int fd);

 private:
  const fastcgi::FcgiLimits limits_;
  std::vector<std::uint8_t> buffer_;  // max_request_bytes + 1: more than any passed request
};

// Counts a connection closed for `screened.reason` (connector_fcgi_rejected_total) and logs it
// at most once per 10 s per reason, so that a flood of them cannot fill the disk.
void note_rejection(const Screened& screened, std::chrono::milliseconds read_timeout);

}  // namespace connector::fcgi
