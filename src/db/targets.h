#pragma once
// Where a connection goes: its servers in order of preference, each with the account to use and
// its circuit breaker and rotation (shared by the process's connections), and its options; made
// from the config (read_targets, write_targets, connection_options).
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "config/config.h"
#include "db/circuit_breaker.h"
#include "db/rotation.h"

namespace connector::db {

// One server and the account to use on it.
struct DatabaseTarget {
  config::DatabaseEndpoint endpoint;
  std::string user;
  std::string password;
  // The process's breaker for this server (nullptr: none, as in the admin tool).
  CircuitBreaker* breaker = nullptr;
  // The process's rotation of this server (nullptr: none, never out).
  Rotation* rotation = nullptr;
};

struct ConnectionOptions {
  std::string database;
  unsigned connect_timeout_s = 2;
  unsigned read_timeout_s = 5;
  // The time budget of one request, enforced by the server (max_statement_time, lock waits)
  // and, against a hung server, by the client's read timeout; 0 leaves the server's defaults.
  unsigned statement_timeout_ms = 0;
  // How long to stay on a fallback server before trying the preferred one again.
  unsigned failback_s = 30;
};

// The breakers and rotations of a process, one of each per server (by its address), shared by
// all its connections: a server found hung by one thread is skipped by all, until the prober
// gets an answer from it; one the lag monitor takes out of rotation, until it puts it back.
class CircuitBreakers {
 public:
  // open_count: where the process counts its open breakers (nullptr: nowhere).
  explicit CircuitBreakers(std::atomic<std::uint32_t>* open_count = nullptr)
      : open_count_(open_count) {}

  // The targets, each pointed at its server's breaker and rotation.
  std::vector<DatabaseTarget> attach(std::vector<DatabaseTarget> targets);
  // The servers whose breaker is open, each with the account that first reached it.
  std::vector<DatabaseTarget> open_servers();

 private:
  struct Entry {
    DatabaseTarget target;
    std::unique_ptr<CircuitBreaker> breaker;
    std::unique_ptr<Rotation> rotation;
  };
  std::atomic<std::uint32_t>* open_count_;
  std::mutex mutex_;
  std::map<std::string, Entry> by_server_;
};

// Reads: the replicas in order, then the primary, with the read account.
std::vector<DatabaseTarget> read_targets(const config::DatabaseSettings& settings);
// Their addresses (endpoint.describe()), in the same order.
std::vector<std::string> read_server_addresses(const config::DatabaseSettings& settings);
// The one write: the primary, with the write account (the read account when none is set).
std::vector<DatabaseTarget> write_targets(const config::DatabaseSettings& settings);
ConnectionOptions connection_options(const config::DatabaseSettings& settings,
                                     unsigned statement_timeout_ms = 0);

}  // namespace connector::db
