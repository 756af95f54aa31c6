#pragma once
// Keeps lagging replicas out of rotation. One process of the pool at a time measures (a lease
// in the pool's shared state, pool/lease.h, taken over by another process when its holder stops
// beating for kLease): every second it reads the primary's clock and each
// replica's copy of the replication heartbeat (sql/migrations/0005), each on a connection of
// its own kept between rounds, within a second per server (a replica's copy of the primary's
// own row, by the primary's server_id: rows other servers left are not its), and writes each
// server's figures
// and rotation to the shared state (pool::ServerSlot). Every process reads the replicas'
// rotation from there at each request (db::Rotation, db/rotation.h): a replica further behind
// than db_replica_max_lag_s, or whose heartbeat cannot be read, is passed over for the next
// server, the primary last, and back once within half the bound (the rule: db/rotation.h). A
// server whose breaker is open (hung) is not measured: a replica is then out until it answers
// again.
//
// The bound: while the primary answers, an answer's data is at most db_replica_max_lag_s plus
// one round old (a second; every process follows at its next request), whatever replication
// does. A round that waits on a hung server takes up to a second more per server, and when the
// measuring process stops, the next takes the lease within kLease (5 s) more. While the primary
// does not answer, what it wrote since its last reading cannot be known: replicas are measured
// against the newest time the primary is known to have written (its clock at the last reading,
// shared by the pool, or a fresher replica's heartbeat), so one that was current stays in and
// serves (answers rather than none: the primary is the only other server), one that falls behind
// another goes out, and one comes back in only once it holds all the pool knows the primary
// wrote, or the primary is read again. A replica not measured yet is out. After a reload only a
// process of the new configuration measures (the master moves the lease's generation).
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "config/config.h"
#include "db/connection.h"
#include "pool/shared_state.h"
#include "util/background_loop.h"

namespace connector::db {

class ReplicaLagMonitor {
 public:
  static constexpr std::chrono::milliseconds kEvery{1000};
  // A lease holder that has not finished a round for this long has stopped (hung, gone).
  static constexpr std::chrono::milliseconds kLease{5000};

  ReplicaLagMonitor(const config::Config& config, CircuitBreakers& breakers,
                    pool::SharedState& state);
  ~ReplicaLagMonitor();
  ReplicaLagMonitor(const ReplicaLagMonitor&) = delete;
  ReplicaLagMonitor& operator=(const ReplicaLagMonitor&) = delete;

  // Runs a round, then one every second in its thread; nothing without replicas or with
  // db_replica_max_lag_s 0.
  void start();
  // Stops the thread and hands the lease on.
  void stop();

 private:
  struct Server {
    DatabaseTarget target;  // the read account, with the server's breaker and rotation
    std::string name;
    std::uint64_t key;
    std::unique_ptr<Connection> session;
  };
  struct PrimaryReading {
    std::optional<std::int64_t> now_us;        // its clock
    std::optional<std::uint64_t> server_id;    // its @@server_id: whose row a heartbeat is
    std::optional<std::int64_t> heartbeat_us;  // its own heartbeat
  };

  std::chrono::milliseconds round();
  bool hold_lease();
  void measure();
  PrimaryReading read_primary(Server& primary);
  // The replica's copy of the row primary_server_id writes; without one (the primary never
  // read by the pool), the newest row.
  std::optional<std::int64_t> read_heartbeat(Server& replica,
                                             std::optional<std::uint64_t> primary_server_id);
  std::optional<std::int64_t> last_primary_clock() const;
  std::optional<std::uint64_t> primary_server_id() const;
  void publish_primary(const PrimaryReading& reading, std::int64_t now_unix_ms);
  void publish_replica(Server& replica, std::optional<std::int64_t> lag_ms, bool primary_read,
                       std::int64_t now_unix_ms);

  const config::Config& config_;
  pool::SharedState& state_;
  const std::int32_t pid_;
  const std::uint32_t generation_;  // the configuration's (SharedState::lag_monitor)
  std::vector<Server> servers_;     // the replicas in order, then the primary
  std::optional<std::int64_t> last_primary_now_us_;
  std::optional<std::uint64_t> primary_server_id_;
  util::BackgroundLoop loop_;
};

}  // namespace connector::db
