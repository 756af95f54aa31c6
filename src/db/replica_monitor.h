#pragma once
// One background thread per worker process that keeps lagging replicas out of rotation. Every
// second it reads the primary's clock and each replica's copy of the replication heartbeat
// (sql/migrations/0005), each on a connection of its own kept between rounds, within a second
// per server; a replica further behind than db_replica_max_lag_s, or whose heartbeat cannot be
// read, is out of rotation (CircuitBreaker::in_rotation) and request connections pass it over
// for the next server, the primary last; it is back once within half the bound
// (db/replica_lag.h). So an answer's data is at most db_replica_max_lag_s plus about a second
// old, whatever replication does. The processes of a pool agree through the scoreboard
// (metrics::ServerSlot): each change is decided, and logged, once. A server whose breaker is
// open (hung) is not measured: a replica is then out until it answers again.
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "config/config.h"
#include "db/background_loop.h"
#include "db/database.h"
#include "metrics/scoreboard.h"

namespace connector::db {

class ReplicaLagMonitor {
 public:
  static constexpr std::chrono::milliseconds kEvery{1000};

  ReplicaLagMonitor(const config::Config& config, CircuitBreakers& breakers,
                    metrics::Scoreboard& board);
  ~ReplicaLagMonitor();
  ReplicaLagMonitor(const ReplicaLagMonitor&) = delete;
  ReplicaLagMonitor& operator=(const ReplicaLagMonitor&) = delete;

  // Measures once, then every second in its thread; nothing without replicas or with
  // db_replica_max_lag_s 0.
  void start();
  void stop() { loop_.stop(); }

 private:
  struct Server {
    DatabaseTarget target;  // the read account, with the server's breaker
    std::string name;
    std::uint64_t key;
    std::unique_ptr<Database> session;
    bool in_rotation = true;  // as this process last applied it
  };
  struct PrimaryReading {
    std::optional<std::int64_t> now_us;        // its clock
    std::optional<std::int64_t> heartbeat_us;  // its own newest heartbeat
  };

  std::chrono::milliseconds round();
  PrimaryReading read_primary(Server& primary);
  std::optional<std::int64_t> read_heartbeat(Server& replica);
  void publish_primary(const PrimaryReading& reading, std::int64_t now_unix_ms);
  void publish_replica(Server& replica, std::optional<std::int64_t> lag_ms,
                       std::int64_t now_unix_ms);

  const config::Config& config_;
  metrics::Scoreboard& board_;
  std::vector<Server> servers_;  // the replicas in order, then the primary
  std::optional<std::int64_t> last_primary_now_us_;
  BackgroundLoop loop_;
};

}  // namespace connector::db
