#pragma once
// The FastCGI listening socket: inherited from systemd (socket activation, LISTEN_FDS) so that
// restarts drop no connection, or opened by the worker itself for the demo and the tests.
#include "config/config.h"

namespace connector::fcgi {

struct ListenSocket {
  int fd = -1;
  bool inherited = false;  // from systemd; `listen` and `listen_mode` were not used
};

// Non-blocking, so the pool threads can poll it together with their stop signal. Throws
// std::runtime_error when it cannot listen.
ListenSocket open_listen_socket(const config::WorkerSettings& worker);

}  // namespace connector::fcgi
