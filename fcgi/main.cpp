// connector-worker: the FastCGI worker process of the query service.
//   connector-worker --config /etc/connector/connector.conf
#include <fcgiapp.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>

#include "config/config.h"
#include "db/database.h"
#include "util/log.h"
#include "worker_pool.h"

namespace {

void ignore_signal(int) {}

// Our own handlers must be in place before FCGX_Init(), or libfcgi installs one for SIGTERM
// that leaves threads blocked in accept(). The signals are then blocked in every thread and
// taken synchronously by main() with sigwait().
sigset_t take_over_signals() {
  struct sigaction action {};
  action.sa_handler = ignore_signal;
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGINT, &action, nullptr);
  signal(SIGPIPE, SIG_IGN);  // nginx may close mid-write; the write just fails
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  return stop_signals;
}

int open_listen_socket(const connector::config::WorkerSettings& worker) {
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

int usage(int code) {
  std::cerr << "usage: connector-worker [--config FILE]\n"
               "Settings come from FILE and CONNECTOR_* environment variables "
               "(see docs/configuration.md).\n";
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  std::string config_path;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--config" && i + 1 < argc) {
      config_path = argv[++i];
    } else if (arg == "--help" || arg == "-h") {
      return usage(0);
    } else {
      return usage(2);
    }
  }
  try {
    const auto config = connector::config::load_config(config_path);
    connector::util::log_info("starting: " + connector::config::describe(config));
    const sigset_t stop_signals = take_over_signals();
    // After each response libfcgi waits up to 2 s for nginx to close the connection; on a unix
    // socket there is nothing to wait for. An explicit setting in the environment wins.
    ::setenv("LIBFCGI_OS_CLOSE_POLL_TIMEOUT", "0", /*overwrite=*/0);
    if (FCGX_Init() != 0) throw std::runtime_error("FCGX_Init failed");
    connector::db::init_driver();
    const int listen_fd = open_listen_socket(config.worker);

    connector::fcgi::WorkerPool pool(listen_fd, config);
    pool.start();
    connector::util::log_info("ready: " + std::to_string(config.worker.threads) + " threads on " +
                              config.worker.listen);
    int signal_number = 0;
    sigwait(&stop_signals, &signal_number);
    connector::util::log_info(std::string("stopping on ") + strsignal(signal_number) +
                              ": finishing requests in flight");
    pool.stop();
    ::close(listen_fd);
    connector::util::log_info("stopped");
    return 0;
  } catch (const std::exception& e) {
    connector::util::log_error(e.what());
    return 1;
  }
}
