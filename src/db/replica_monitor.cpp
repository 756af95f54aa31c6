#include "db/replica_monitor.h"

#include <unistd.h>

#include <algorithm>
#include <span>

#include "db/replica_lag.h"
#include "db/rotation.h"
#include "util/clock.h"
#include "util/log.h"

namespace connector::db {
namespace {

static_assert(config::kMaxReplicas + 1 <= pool::kMaxServerSlots,
              "a shared slot for every replica and the primary");

// The primary's clock, its server_id, and its own heartbeat (NULL before the first), in unix
// microseconds. UNIX_TIMESTAMP() and NOW(6) read the statement's one start time, and neither
// the seconds since the epoch nor the microseconds depend on the session's time zone (a clock
// in local time would jump back an hour at a change of summer time).
constexpr const char* kPrimarySql =
    "SELECT UNIX_TIMESTAMP() * 1000000 + MICROSECOND(NOW(6)), @@server_id,"
    " (SELECT written_us FROM replication_heartbeat WHERE server_id = @@server_id)";
// The heartbeat a replica has applied: the current primary's row only. A row another server
// left (a former primary, whose clock may have run ahead) says nothing of what the replica
// holds, and the newest of all rows would then make every replica look current.
constexpr const char* kReplicaSql =
    "SELECT written_us FROM replication_heartbeat WHERE server_id = ?";
// Only until the pool has read the primary once (started while it was away): the newest row.
constexpr const char* kReplicaNewestSql = "SELECT MAX(written_us) FROM replication_heartbeat";

using util::monotonic_ms;

}  // namespace

ReplicaLagMonitor::ReplicaLagMonitor(const config::Config& config, CircuitBreakers& breakers,
                                     pool::SharedState& state)
    : config_(config),
      state_(state),
      pid_(static_cast<std::int32_t>(::getpid())),
      generation_(state.lag_monitor.generation.load()) {
  if (config.db.replicas.empty() || config.db.replica_max_lag_s == 0) return;  // nothing to bound
  // A second per server and statement: a hung server holds this thread for that long only.
  auto options = connection_options(config.db, /*statement_timeout_ms=*/1000);
  options.connect_timeout_s = 1;
  auto targets = breakers.attach(read_targets(config.db));
  for (std::size_t i = 0; i < targets.size(); ++i) {
    auto& target = targets[i];
    std::string name = target.endpoint.describe();
    const auto key = pool::server_key(name);
    // The replicas follow the pool's rotation; the primary (last) is never out.
    auto* slot = state.find_server(key);
    if (slot != nullptr && i + 1 < targets.size()) target.rotation->follow(*slot, key);
    auto session = std::make_unique<Connection>(std::vector{target}, options, /*probe=*/true);
    servers_.push_back({std::move(target), std::move(name), key, std::move(session)});
  }
}

ReplicaLagMonitor::~ReplicaLagMonitor() { stop(); }

void ReplicaLagMonitor::start() {
  if (servers_.empty()) return;
  loop_.start<DriverThreadScope>("lag-monitor", [this] { return round(); });
}

void ReplicaLagMonitor::stop() {
  loop_.stop();
  state_.lag_monitor.release(pid_);
}

std::chrono::milliseconds ReplicaLagMonitor::round() {
  const auto started = std::chrono::steady_clock::now();
  if (hold_lease()) {
    measure();
    state_.lag_monitor.beat(monotonic_ms());
  }
  // Every second from start to start: a slow round (a server that waited out its second)
  // does not stretch the interval.
  const auto spent = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - started);
  return std::max(kEvery - spent, std::chrono::milliseconds(0));
}

bool ReplicaLagMonitor::hold_lease() {
  return state_.lag_monitor.hold(pid_, generation_, monotonic_ms(), kLease.count());
}

void ReplicaLagMonitor::measure() {
  using std::chrono::steady_clock;
  const auto primary = read_primary(servers_.back());
  const auto primary_read_at = steady_clock::now();
  if (primary.now_us) last_primary_now_us_ = primary.now_us;
  if (primary.server_id) primary_server_id_ = primary.server_id;
  const auto writer = primary_server_id();
  state_.lag_monitor.beat(monotonic_ms());
  const std::span replicas(servers_.data(), servers_.size() - 1);
  std::vector<std::optional<std::int64_t>> heartbeats;
  std::vector<std::int64_t> read_after_primary_us;  // how long after the primary's clock
  for (auto& replica : replicas) {
    heartbeats.push_back(read_heartbeat(replica, writer));
    read_after_primary_us.push_back(
        std::chrono::duration_cast<std::chrono::microseconds>(steady_clock::now() - primary_read_at)
            .count());
    state_.lag_monitor.beat(monotonic_ms());  // a slow round keeps its lease
  }

  // Published only by the holder still: one stalled past the lease between two reads (beats)
  // has lost it to a process with fresher readings.
  if (!state_.lag_monitor.held_by(pid_)) return;
  const auto reference = lag_reference(primary.now_us, last_primary_clock(), heartbeats);
  const auto now_unix_ms = util::unix_ms_now();
  publish_primary(primary, now_unix_ms);
  for (std::size_t i = 0; i < replicas.size(); ++i) {
    // Against the primary's clock as it was when this replica was read, not earlier.
    auto reference_at_read = reference;
    if (primary.now_us && reference) *reference_at_read += read_after_primary_us[i];
    publish_replica(replicas[i], replica_lag_ms(reference_at_read, heartbeats[i]),
                    primary.now_us.has_value(), now_unix_ms);
  }
}

ReplicaLagMonitor::PrimaryReading ReplicaLagMonitor::read_primary(Server& primary) {
  if (primary.target.breaker->open()) return {};
  primary.session->set_deadline(Connection::Clock::now() + std::chrono::seconds(1));
  try {
    return primary.session->run([](Connection& session) {
      auto rs = session.query(kPrimarySql);
      PrimaryReading reading;
      if (!rs->next()) return reading;
      reading.now_us = rs->getInt64(1);
      reading.server_id = rs->getUInt64(2);
      if (!rs->isNull(3)) reading.heartbeat_us = rs->getInt64(3);
      return reading;
    });
  } catch (const std::exception&) {  // away or hung: the replicas are measured without it
    return {};
  }
}

std::optional<std::int64_t> ReplicaLagMonitor::read_heartbeat(
    Server& replica, std::optional<std::uint64_t> primary_server_id) {
  if (replica.target.breaker->open()) return std::nullopt;
  replica.session->set_deadline(Connection::Clock::now() + std::chrono::seconds(1));
  try {
    return replica.session->run([&](Connection& session) -> std::optional<std::int64_t> {
      auto rs = primary_server_id ? session.query(kReplicaSql, {*primary_server_id})
                                  : session.query(kReplicaNewestSql);
      if (!rs->next() || rs->isNull(1)) return std::nullopt;
      return rs->getInt64(1);
    });
  } catch (const std::exception&) {  // away, hung, or no heartbeat table: not measured
    return std::nullopt;
  }
}

// The newest time the primary is known to have written: this process's last reading, or the
// pool's (a process that took the lease while the primary was away knows it from there).
std::optional<std::int64_t> ReplicaLagMonitor::last_primary_clock() const {
  std::optional<std::int64_t> newest = last_primary_now_us_;
  if (const auto* slot = state_.find_server(servers_.back().key)) {
    const std::int64_t shared = slot->clock_us.load();
    if (shared > 0 && (!newest || shared > *newest)) newest = shared;
  }
  return newest;
}

// The server the replicas' heartbeat row must come from: as this process last read the primary,
// or the pool (a process that took the lease while the primary was away knows it from there).
std::optional<std::uint64_t> ReplicaLagMonitor::primary_server_id() const {
  if (primary_server_id_) return primary_server_id_;
  if (const auto* slot = state_.find_server(servers_.back().key)) {
    const std::int64_t shared = slot->server_id.load();
    if (shared >= 0) return static_cast<std::uint64_t>(shared);
  }
  return std::nullopt;
}

void ReplicaLagMonitor::publish_primary(const PrimaryReading& reading, std::int64_t now_unix_ms) {
  auto* slot = state_.find_server(servers_.back().key);
  if (slot == nullptr || !reading.now_us) return;
  if (reading.server_id) slot->server_id.store(static_cast<std::int64_t>(*reading.server_id));
  const auto age = replica_lag_ms(reading.now_us, reading.heartbeat_us);
  slot->lag_ms.store(age.value_or(-1));
  slot->clock_us.store(*reading.now_us);
  slot->measured_unix_ms.store(now_unix_ms);
}

void ReplicaLagMonitor::publish_replica(Server& replica, std::optional<std::int64_t> lag_ms,
                                        bool primary_read, std::int64_t now_unix_ms) {
  const std::int64_t max_lag_ms = std::int64_t{config_.db.replica_max_lag_s} * 1000;
  auto& rotation = *replica.target.rotation;
  const bool was = rotation.in();
  const bool next = in_rotation_after({.role = ServerRole::replica,
                                       .in_rotation = was,
                                       .lag_ms = lag_ms,
                                       .primary_read = primary_read,
                                       .max_lag_ms = max_lag_ms});
  rotation.set(next);
  if (auto* slot = state_.find_server(replica.key)) {
    slot->lag_ms.store(lag_ms.value_or(-1));
    slot->measured_unix_ms.store(now_unix_ms);
  }
  if (was == next) return;
  const std::string lag =
      lag_ms ? util::seconds_text(*lag_ms) + " s behind" : std::string("its lag unknown");
  if (next) {
    util::log_info("database replica " + replica.name + " back in rotation: " + lag);
  } else {
    util::log_warning("database replica " + replica.name + " out of rotation: " + lag +
                      (lag_ms ? "" : " (down, hung, or no replication_heartbeat table)") +
                      ", db_replica_max_lag_s " + std::to_string(config_.db.replica_max_lag_s));
  }
}

}  // namespace connector::db
