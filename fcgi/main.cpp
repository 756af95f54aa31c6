// connector-worker: the FastCGI worker of the query service (a master and its worker
// processes; see master.h).
//   connector-worker --config /etc/connector/connector.conf
#include <fcgiapp.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <ctime>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "config/config.h"
#include "db/new_row_budget.h"
#include "fastcgi/web_server_addrs.h"
#include "listen_socket.h"
#include "master.h"
#include "metrics/scoreboard.h"
#include "pool/shared_state.h"
#include "util/log.h"

namespace {

void ignore_signal(int) {}

// Our own handlers must be in place before FCGX_Init(), or libfcgi installs one for SIGTERM.
// The signals are then blocked in every process and thread and taken synchronously
// (sigtimedwait) by the master and by each worker process's main thread.
void take_over_signals() {
  struct sigaction action {};
  action.sa_handler = ignore_signal;
  for (int s : {SIGTERM, SIGINT, SIGHUP, SIGCHLD}) sigaction(s, &action, nullptr);
  signal(SIGPIPE, SIG_IGN);  // nginx may close mid-write; the write just fails
  sigset_t blocked;
  sigemptyset(&blocked);
  for (int s : {SIGTERM, SIGINT, SIGHUP, SIGCHLD}) sigaddset(&blocked, s);
  sigprocmask(SIG_BLOCK, &blocked, nullptr);
}

// Who may connect: FCGI_WEB_SERVER_ADDRS for a TCP socket (an invalid list stops the start
// here, not in each worker process). A TCP socket open to any peer needs listen_allow_any.
void check_web_servers(int listen_fd, bool allow_any) {
  using connector::fastcgi::WebServerAddrs;
  const auto web_servers = WebServerAddrs::from_environment();
  sockaddr_storage local{};
  socklen_t length = sizeof local;
  const bool tcp = ::getsockname(listen_fd, reinterpret_cast<sockaddr*>(&local), &length) == 0 &&
                   (local.ss_family == AF_INET || local.ss_family == AF_INET6);
  if (!tcp) return;
  if (web_servers.restricts()) {
    connector::util::log_info(std::string("FastCGI connections accepted from ") +
                              WebServerAddrs::kVariable + "=" + web_servers.describe() + " only");
  } else if (allow_any) {
    connector::util::log_warning(
        std::string("listening on TCP without ") + WebServerAddrs::kVariable +
        " (listen_allow_any = yes): any host that can reach the port can send requests to the "
        "worker");
  } else {
    throw connector::config::ConfigError(
        std::string("refusing to listen on TCP without ") + WebServerAddrs::kVariable +
        ": any host that can reach the port could send requests to the worker. Set it to the "
        "address(es) of nginx (docs/operations.md), or listen_allow_any = yes on a network no "
        "one else can reach");
  }
}

int usage(int code) {
  std::cerr << "usage: connector-worker [--config FILE] [--env-file FILE] [--check-config]\n"
               "Settings come from FILE and CONNECTOR_* environment variables "
               "(see README.md, Configuration).\n"
               "--env-file FILE sets the variables of a systemd EnvironmentFile first (e.g.\n"
               "/etc/connector/connector.env), so --check-config sees what the service sees.\n";
  return code;
}

// Sets the environment file's variables, as systemd's EnvironmentFile= does for the service.
void apply_environment_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw connector::config::ConfigError("cannot read environment file " + path);
  std::stringstream text;
  text << in.rdbuf();
  for (const auto& [key, value] : connector::config::parse_environment_file(text.str())) {
    ::setenv(key.c_str(), value.c_str(), /*overwrite=*/1);
  }
}

}  // namespace

int main(int argc, char** argv) {
  using namespace connector;
  std::string config_path;
  std::string env_file;
  bool check_only = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--config" && i + 1 < argc) {
      config_path = argv[++i];
    } else if (arg == "--env-file" && i + 1 < argc) {
      env_file = argv[++i];
    } else if (arg == "--check-config") {
      check_only = true;
    } else if (arg == "--help" || arg == "-h") {
      return usage(0);
    } else {
      return usage(2);
    }
  }
  try {
    if (!env_file.empty()) apply_environment_file(env_file);
    auto config = config::load_config(config_path);
    if (check_only) {
      std::cout << config::describe(config) << "\n";
      return 0;
    }
    util::log_info("starting: " + config::describe(config));
    take_over_signals();
    // After each response libfcgi waits up to 2 s for nginx to close the connection; on a unix
    // socket there is nothing to wait for. An explicit setting in the environment wins.
    ::setenv("LIBFCGI_OS_CLOSE_POLL_TIMEOUT", "0", /*overwrite=*/0);
    if (FCGX_Init() != 0) throw std::runtime_error("FCGX_Init failed");
    const auto socket = fcgi::open_listen_socket(config.worker);
    util::log_info(socket.inherited ? "listening on the socket passed by systemd (fd " +
                                          std::to_string(socket.fd) + ")"
                                    : "listening on " + config.worker.listen);
    check_web_servers(socket.fd, config.worker.listen_allow_any);
    auto& board = metrics::create_shared_scoreboard();
    auto& state = pool::create_shared_state();
    db::create_shared_new_row_window();
    board.start_time_unix.store(static_cast<std::int64_t>(std::time(nullptr)));
    fcgi::Master master(config_path, std::move(config), socket.fd, board, state);
    return master.run();
  } catch (const std::exception& e) {
    util::log_error(e.what());
    return 1;
  }
}
