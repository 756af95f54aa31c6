#pragma once
// What libfcgi 2.4 makes of some bytes, read the way the worker reads a request
// (fcgi/worker_pool.cpp: the connection handed to FCGX_Accept_r open, then the body read to its
// end). The bytes go through a socket pair whose writing end is closed before libfcgi reads, so
// libfcgi meets the end of the input where it wants more, rather than blocking. The tests that
// compare libfcgi with the screen (net/fcgi_screen.h) use it: a request the screen passes must
// be read by libfcgi whole, without an error, as the same pairs and body.
#include <fcgiapp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <span>

namespace connector::testing {

struct LibfcgiReading {
  bool accepted = false;  // FCGX_Accept_r returned a request
  bool error = true;      // its input stream failed (the request was cut short, or broken)
  std::size_t pairs = 0;  // the parameters it read
  std::size_t stdin_bytes = 0;
};

// At most this many bytes: a socket pair's buffer holds them without a reader.
inline constexpr std::size_t kMaxLibfcgiInput = 100'000;

inline LibfcgiReading read_with_libfcgi(std::span<const std::uint8_t> bytes) {
  LibfcgiReading reading;
  int ends[2];
  if (bytes.size() > kMaxLibfcgiInput || ::socketpair(AF_UNIX, SOCK_STREAM, 0, ends) != 0) {
    return reading;
  }
  int send_buffer = static_cast<int>(kMaxLibfcgiInput) * 2;
  ::setsockopt(ends[1], SOL_SOCKET, SO_SNDBUF, &send_buffer, sizeof send_buffer);
  const bool sent =
      ::write(ends[1], bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size());
  ::close(ends[1]);
  if (!sent) {
    ::close(ends[0]);
    return reading;
  }
  FCGX_Init();
  FCGX_Request request;
  FCGX_InitRequest(&request, -1, 0);
  request.ipcFd = ends[0];
  request.keepConnection = 1;
  reading.accepted = FCGX_Accept_r(&request) >= 0;  // on failure it has closed the connection
  if (reading.accepted) {
    // Its environment starts with the FCGI_ROLE it adds itself, then the request's pairs.
    for (char** env = request.envp; env != nullptr && *env != nullptr; ++env) ++reading.pairs;
    reading.pairs -= reading.pairs > 0 ? 1 : 0;
    char buffer[1024];
    for (int n; (n = FCGX_GetStr(buffer, sizeof buffer, request.in)) > 0;) {
      reading.stdin_bytes += static_cast<std::size_t>(n);
    }
    reading.error = FCGX_GetError(request.in) != 0;
    // Closed here, nothing written (the other end is gone), as the worker does.
    ::close(request.ipcFd);
    request.ipcFd = -1;
    for (FCGX_Stream* stream : {request.out, request.err}) {
      stream->isClosed = 1;
      stream->wasFCloseCalled = 1;
    }
    FCGX_Finish_r(&request);
  }
  FCGX_Free(&request, 0);
  return reading;
}

}  // namespace connector::testing
