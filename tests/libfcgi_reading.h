#pragma once
// What libfcgi 2.4 makes of some bytes, read the way the worker reads a request
// (fcgi/worker_pool.cpp: the connection handed to FCGX_Accept_r open, then the body read to its
// end). The bytes go through a SOCK_SEQPACKET socket pair in messages of `chunk` bytes, written
// by a thread of their own, so each of libfcgi's reads returns at most one message: records,
// headers and padding split across reads as a slow peer would split them. The writing end is
// closed after the last message, so libfcgi meets the end of the input where it wants more,
// rather than blocking. The tests that compare libfcgi with the screen (fastcgi/fcgi_screen.h) use
// it: a request the screen passes must be read by libfcgi whole, without an error, as the same
// pairs, keep-connection flag and body, and to its last byte.
#include <fcgiapp.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace connector::testing {

// A pair as libfcgi keeps it: "name=value" as a C string, so it ends at a NUL byte in either
// (the worker reads it as libfcgi keeps it).
inline std::string libfcgi_entry(std::string_view name, std::string_view value) {
  std::string entry = std::string(name) + "=" + std::string(value);
  return entry.substr(0, entry.find('\0'));
}

struct LibfcgiReading {
  bool accepted = false;  // FCGX_Accept_r returned a request
  bool error = true;      // its input stream failed (the request was cut short, or broken)
  bool keep_connection = false;
  bool bytes_left = true;           // bytes it did not read (it stopped before the end)
  std::vector<std::string> params;  // "name=value", in order (without libfcgi's FCGI_ROLE)
  std::size_t stdin_bytes = 0;
};

// libfcgi's side: FCGX_Accept_r on connection `fd`, then the body to its end.
inline void read_request(int fd, LibfcgiReading& reading) {
  FCGX_Init();
  FCGX_Request request;
  FCGX_InitRequest(&request, -1, 0);
  request.ipcFd = fd;
  request.keepConnection = 1;
  request.detached = 1;  // a failed read closes it with a plain close(), as in the worker
  reading.accepted = FCGX_Accept_r(&request) >= 0;  // on failure it has closed the connection
  if (reading.accepted) {
    // Its environment starts with the FCGI_ROLE it adds itself, then the request's pairs.
    for (char** env = request.envp; env != nullptr && *env != nullptr; ++env) {
      if (env != request.envp) reading.params.emplace_back(*env);
    }
    reading.keep_connection = request.keepConnection != 0;
    char buffer[1024];
    for (int n; (n = FCGX_GetStr(buffer, sizeof buffer, request.in)) > 0;) {
      reading.stdin_bytes += static_cast<std::size_t>(n);
    }
    reading.error = FCGX_GetError(request.in) != 0;
    // Anything libfcgi left unread: the peek waits for the writer's next message or its
    // close (0, the end), so a message still on its way is seen too.
    char next;
    reading.bytes_left = ::recv(request.ipcFd, &next, 1, MSG_PEEK) > 0;
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
}

inline LibfcgiReading read_with_libfcgi(std::span<const std::uint8_t> bytes, std::size_t chunk) {
  LibfcgiReading reading;
  int ends[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, ends) != 0) return reading;
  chunk = std::clamp<std::size_t>(chunk, 1, 4096);  // below libfcgi's 8 KiB reads
  // The writer and libfcgi run in threads with every signal blocked: a signal (libFuzzer's
  // timer, for one) would end one of libfcgi's reads with EINTR, which it takes for a broken
  // connection. The worker blocks them in its threads too (fcgi/main.cpp).
  sigset_t all;
  sigset_t old;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &old);
  std::thread writer([&bytes, chunk, fd = ends[1]] {
    for (std::size_t at = 0; at < bytes.size(); at += chunk) {
      const std::size_t n = std::min(chunk, bytes.size() - at);
      if (::send(fd, bytes.data() + at, n, MSG_NOSIGNAL) != static_cast<ssize_t>(n)) break;
    }
    ::close(fd);
  });
  std::thread reader([&reading, fd = ends[0]] { read_request(fd, reading); });
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  reader.join();
  writer.join();
  return reading;
}

}  // namespace connector::testing
