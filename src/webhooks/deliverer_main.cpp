// connector-webhooks: the webhook deliverer of one node (webhooks/deliverer.h; docs/webhooks.md).
// Run one per node under systemd (systemd/connector-webhooks.service); the lease on the primary
// makes one of them deliver for the fleet. SIGTERM or SIGINT stops it cleanly: deliveries in
// flight get two seconds, the cursors are stored and the lease is freed.
#include <curl/curl.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <random>
#include <string>

#include "config/config.h"
#include "db/connection.h"
#include "util/log.h"
#include "webhooks/deliverer.h"

namespace {

std::atomic<bool> stop_requested{false};

void request_stop(int) { stop_requested.store(true); }

int usage(int code) {
  std::cerr << "usage: connector-webhooks [--config FILE] [--check-config]\n"
               "Delivers the signed webhooks of the subscriptions `connector-admin webhook` "
               "manages.\nSettings: FILE (the worker's, its webhooks_* keys) and CONNECTOR_* "
               "environment variables.\n";
  return code;
}

// "host pid nonce": who holds the lease, in the lease row and the logs. The nonce keeps two
// deliverers apart that share a host name and a pid (containers, each its own pid 1): the
// lease's fence is the holder's name.
std::string holder_name() {
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
  std::random_device random;
  char nonce[9];
  std::snprintf(nonce, sizeof nonce, "%08x", random());
  return std::string(host) + " " + std::to_string(::getpid()) + " " + nonce;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace connector;
  std::string config_path;
  bool check_only = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--config" && i + 1 < argc) {
      config_path = argv[++i];
    } else if (arg == "--check-config") {
      check_only = true;
    } else if (arg == "--help" || arg == "-h") {
      return usage(0);
    } else {
      return usage(2);
    }
  }
  try {
    const auto config = config::load_config(config_path);
    if (check_only) {
      std::cout << config::describe(config) << "\n";
      return 0;
    }
    struct sigaction action {};
    action.sa_handler = request_stop;
    for (const int s : {SIGTERM, SIGINT}) sigaction(s, &action, nullptr);
    std::signal(SIGPIPE, SIG_IGN);
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
      throw std::runtime_error("curl_global_init failed");
    }
    db::init_driver();
    db::DriverThreadScope driver_thread;
    webhooks::Deliverer deliverer(config, holder_name());
    deliverer.run(stop_requested);
    return 0;
  } catch (const std::exception& e) {
    util::log_error(e.what());
    return 1;
  }
}
