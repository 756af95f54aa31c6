#include "listen_socket.h"

#include <fcgiapp.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

namespace connector::fcgi {
namespace {

int open_own(const config::WorkerSettings& worker) {
  const bool unix_path = worker.listen.find('/') != std::string::npos;
  if (unix_path) ::unlink(worker.listen.c_str());  // a stale socket from an earlier run
  const int fd = FCGX_OpenSocket(worker.listen.c_str(), static_cast<int>(worker.listen_backlog));
  if (fd < 0) throw std::runtime_error("cannot listen on " + worker.listen);
  // nginx runs as another user: the socket's mode is set explicitly, not left to the umask.
  if (unix_path && ::chmod(worker.listen.c_str(), worker.listen_mode) != 0) {
    throw std::runtime_error("cannot chmod " + worker.listen + ": " + std::strerror(errno));
  }
  return fd;
}

}  // namespace

ListenSocket open_listen_socket(const config::WorkerSettings& worker) {
  ListenSocket socket;
  const int inherited = sd_listen_fds(/*unset_environment=*/1);
  if (inherited > 1) throw std::runtime_error("systemd passed more than one socket");
  if (inherited == 1) {
    socket = {SD_LISTEN_FDS_START, true};
  } else {
    socket = {open_own(worker), false};
  }
  const int flags = ::fcntl(socket.fd, F_GETFL);
  if (flags < 0 || ::fcntl(socket.fd, F_SETFL, flags | O_NONBLOCK) != 0) {
    throw std::runtime_error(std::string("cannot make the listening socket non-blocking: ") +
                             std::strerror(errno));
  }
  return socket;
}

}  // namespace connector::fcgi
