#pragma once
// One background thread per worker process that reloads the reference data and the supply
// snapshot on their interval (with jitter, so processes do not reload in step), on a connection
// of its own. Request threads never reload: networks, connects and pairs answer from memory
// whatever the database does. After a failed load it retries on a separate, shorter back-off,
// and it is the circuit breaker's probe: its first answer after an outage closes the breaker.
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "config/config.h"
#include "db/database.h"
#include "db/reference_store.h"
#include "db/supply_store.h"

namespace connector::db {

// The refresher's interval for a config: reference_refresh_ms, where 0 ("as fresh as possible")
// means every 50 ms rather than a busy loop.
std::chrono::milliseconds refresh_interval(const config::Config& config);

class SnapshotRefresher {
 public:
  SnapshotRefresher(const config::Config& config, ReferenceCache& reference, SupplyCache& supply,
                    CircuitBreakers& breakers);
  ~SnapshotRefresher();
  SnapshotRefresher(const SnapshotRefresher&) = delete;
  SnapshotRefresher& operator=(const SnapshotRefresher&) = delete;

  // Starts the thread and waits for its first load to end (loaded or failed), so a process
  // that can reach its database serves from its first request.
  void start();
  void stop();

  // The wait after a load: the interval with +-10 % jitter after a success; after a failure
  // 250 ms, then 500 ms while they go on, whatever the interval: the refresher is the circuit
  // breaker's probe, so a recovered database is seen within half a second (one connect attempt
  // per process and half second is no load on a server that is down). Public for tests.
  static std::chrono::milliseconds next_wait(std::chrono::milliseconds interval,
                                             unsigned failures, double jitter);

 private:
  void run();
  bool load_all(Database& db, unsigned failures_so_far);

  const config::Config& config_;
  ReferenceCache& reference_;
  SupplyCache& supply_;
  CircuitBreakers& breakers_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  bool first_load_done_ = false;
  std::thread thread_;
};

}  // namespace connector::db
