#pragma once
// One background thread per worker process that reloads its refreshed copies (db/refreshed.h:
// the reference data and the chains' status and supply) on their interval (with jitter, so
// processes do not reload in step), on a connection of its own. Request threads never reload:
// networks, connects and pairs answer from memory whatever the database does. After a failed
// load it tries again sooner (250 ms, then every 500 ms, or its interval if shorter) and keeps
// serving the old copies meanwhile.
#include <chrono>
#include <memory>

#include "config/config.h"
#include "db/connection.h"
#include "db/refreshed_reference.h"
#include "db/refreshed_supply.h"
#include "metrics/scoreboard.h"
#include "util/background_loop.h"

namespace connector::db {

// The refresher's interval for a config: reference_refresh_ms, where 0 ("as fresh as possible")
// means every 50 ms rather than a busy loop.
std::chrono::milliseconds refresh_interval(const config::Config& config);

class Refresher {
 public:
  // loads: where each successful load is recorded (the process's scoreboard slot, for /status).
  Refresher(const config::Config& config, RefreshedReference& reference, RefreshedSupply& supply,
            CircuitBreakers& breakers, metrics::RefreshedLoads& loads);

  // Starts the thread and waits for its first load to end (loaded or failed), so a process
  // that can reach its database serves from its first request.
  void start();
  void stop() { loop_.stop(); }

  // The wait after a load: the interval with +-10 % jitter after a success; after a failure
  // 250 ms, then 500 ms while they go on (the interval if shorter). Public for tests.
  static std::chrono::milliseconds next_wait(std::chrono::milliseconds interval, unsigned failures,
                                             double jitter);

 private:
  bool load_all();

  const config::Config& config_;
  RefreshedReference& reference_;
  RefreshedSupply& supply_;
  CircuitBreakers& breakers_;
  metrics::RefreshedLoads& loads_;
  std::unique_ptr<Connection> db_;  // made and used on the loop's thread only
  unsigned failures_ = 0;
  util::BackgroundLoop loop_;
};

}  // namespace connector::db
