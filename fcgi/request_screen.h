#pragma once
// Waits for one whole request on a connection and screens it (net/fcgi_screen.h) before libfcgi
// reads a byte of it. The bytes are only peeked at (recv with MSG_PEEK), so libfcgi then reads
// exactly what was screened, all of it already queued: it never blocks on a slow peer and never
// sees a record the screen refused. The wait ends at the read deadline (fcgi_read_timeout_ms).
// More bytes are waited for in an epoll set of the thread's own, edge-triggered: the queued
// bytes keep the connection readable, so only an edge says that more have arrived.
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "net/fcgi_screen.h"

namespace connector::fcgi {

struct Screened {
  enum class Outcome {
    kRequest,   // a whole request within bounds is queued: libfcgi may read it
    kClosed,    // the peer closed, or abandoned its request: close quietly
    kRejected,  // close at once; counted by reason
  };
  Outcome outcome = Outcome::kClosed;
  net::FcgiRejection reason = net::FcgiRejection::kNone;
  std::string_view detail;  // for the log, with kRejected
};

class RequestScreen {
 public:
  // One per thread.
  RequestScreen(net::FcgiLimits limits, std::chrono::milliseconds read_timeout);
  ~RequestScreen();
  RequestScreen(const RequestScreen&) = delete;
  RequestScreen& operator=(const RequestScreen&) = delete;

  Screened wait(int fd);

 private:
  // Peeks at what is queued; its verdict, or nullopt-like kIncomplete to wait on.
  net::FcgiScreen peek(int fd, bool& peer_closed);
  // Waits until more bytes (or the peer's close) arrive, or until `deadline`; false then.
  bool wait_for_more(int fd, std::chrono::steady_clock::time_point deadline, bool& registered,
                     bool& hung_up);

  const net::FcgiLimits limits_;
  const std::chrono::milliseconds read_timeout_;
  const int epoll_fd_;
  std::vector<std::uint8_t> buffer_;  // max_request_bytes + 1: more than any passed request
};

}  // namespace connector::fcgi
