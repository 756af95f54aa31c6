#include "db/replica_monitor.h"

#include <chrono>
#include <span>

#include "db/replica_lag.h"
#include "util/clock.h"
#include "util/log.h"

namespace connector::db {
namespace {

// The primary's clock, and its own newest heartbeat (NULL before the first), in microseconds.
constexpr const char* kPrimarySql =
    "SELECT CAST(UNIX_TIMESTAMP(NOW(6)) * 1000000 AS SIGNED),"
    " (SELECT MAX(written_us) FROM replication_heartbeat)";
// The newest heartbeat a replica has applied: the newest row, whichever server wrote it, so
// that a promoted replica's heartbeat counts as soon as it writes one.
constexpr const char* kReplicaSql = "SELECT MAX(written_us) FROM replication_heartbeat";

std::string seconds_text(std::int64_t ms) {
  return std::to_string(ms / 1000) + "." + std::to_string(ms % 1000 / 100) + " s";
}

}  // namespace

ReplicaLagMonitor::ReplicaLagMonitor(const config::Config& config, CircuitBreakers& breakers,
                                     metrics::Scoreboard& board)
    : config_(config), board_(board) {
  if (config.db.replicas.empty() || config.db.replica_max_lag_s == 0) return;  // nothing to bound
  // A second per server and statement: a hung server holds this thread for that long only.
  auto options = connection_options(config.db, /*statement_timeout_ms=*/1000);
  options.connect_timeout_s = 1;
  for (auto& target : breakers.attach(read_targets(config.db))) {
    std::string name = target.endpoint.describe();
    const auto key = metrics::server_key(name);
    auto session = std::make_unique<Database>(std::vector{target}, options, /*probe=*/true);
    servers_.push_back({std::move(target), std::move(name), key, std::move(session)});
  }
}

ReplicaLagMonitor::~ReplicaLagMonitor() { stop(); }

void ReplicaLagMonitor::start() {
  if (servers_.empty()) return;
  loop_.start([this] { return round(); });
}

std::chrono::milliseconds ReplicaLagMonitor::round() {
  const auto primary = read_primary(servers_.back());
  if (primary.now_us) last_primary_now_us_ = primary.now_us;
  const std::span replicas(servers_.data(), servers_.size() - 1);
  std::vector<std::optional<std::int64_t>> heartbeats;
  for (auto& replica : replicas) heartbeats.push_back(read_heartbeat(replica));

  const auto reference = lag_reference(primary.now_us, last_primary_now_us_, heartbeats);
  const auto now_unix_ms = util::unix_ms_now();
  publish_primary(primary, now_unix_ms);
  for (std::size_t i = 0; i < replicas.size(); ++i) {
    publish_replica(replicas[i], replica_lag_ms(reference, heartbeats[i]), now_unix_ms);
  }
  return kEvery;
}

ReplicaLagMonitor::PrimaryReading ReplicaLagMonitor::read_primary(Server& primary) {
  if (primary.target.breaker->open()) return {};
  primary.session->set_deadline(Database::Clock::now() + std::chrono::seconds(1));
  try {
    return primary.session->run([](Database& session) {
      auto rs = session.query(kPrimarySql);
      PrimaryReading reading;
      if (!rs->next()) return reading;
      reading.now_us = rs->getInt64(1);
      if (!rs->isNull(2)) reading.heartbeat_us = rs->getInt64(2);
      return reading;
    });
  } catch (const std::exception&) {  // away or hung: the replicas are measured without it
    return {};
  }
}

std::optional<std::int64_t> ReplicaLagMonitor::read_heartbeat(Server& replica) {
  if (replica.target.breaker->open()) return std::nullopt;
  replica.session->set_deadline(Database::Clock::now() + std::chrono::seconds(1));
  try {
    return replica.session->run([](Database& session) -> std::optional<std::int64_t> {
      auto rs = session.query(kReplicaSql);
      if (!rs->next() || rs->isNull(1)) return std::nullopt;
      return rs->getInt64(1);
    });
  } catch (const std::exception&) {  // away, hung, or no heartbeat table: not measured
    return std::nullopt;
  }
}

void ReplicaLagMonitor::publish_primary(const PrimaryReading& reading, std::int64_t now_unix_ms) {
  auto* slot = board_.server_slot(servers_.back().key);
  if (slot == nullptr || !reading.now_us) return;
  const auto age = replica_lag_ms(reading.now_us, reading.heartbeat_us);
  slot->lag_ms.store(age.value_or(-1));
  slot->measured_unix_ms.store(now_unix_ms);
}

void ReplicaLagMonitor::publish_replica(Server& replica, std::optional<std::int64_t> lag_ms,
                                        std::int64_t now_unix_ms) {
  const std::int64_t max_lag_ms = std::int64_t{config_.db.replica_max_lag_s} * 1000;
  auto* slot = board_.server_slot(replica.key);
  bool was = slot != nullptr ? slot->in_rotation.load() != 0 : replica.in_rotation;
  const bool next = next_in_rotation(was, lag_ms, max_lag_ms);
  bool changed = was != next;
  if (slot != nullptr) {
    // The pool's processes decide together: only the one whose decision lands logs it; one
    // that lost the race takes the others' decision.
    std::uint32_t expected = was ? 1 : 0;
    changed = changed && slot->in_rotation.compare_exchange_strong(expected, next ? 1 : 0);
    slot->lag_ms.store(lag_ms.value_or(-1));
    slot->measured_unix_ms.store(now_unix_ms);
    replica.in_rotation = slot->in_rotation.load() != 0;
  } else {
    replica.in_rotation = next;
  }
  replica.target.breaker->set_in_rotation(replica.in_rotation);
  if (!changed) return;
  const std::string lag = lag_ms ? seconds_text(*lag_ms) + " behind" : "its lag unknown";
  if (next) {
    util::log_info("database replica " + replica.name + " back in rotation: " + lag);
  } else {
    util::log_warning("database replica " + replica.name + " out of rotation: " + lag +
                      (lag_ms ? "" : " (down, hung, or no replication_heartbeat table)") +
                      ", db_replica_max_lag_s " + std::to_string(config_.db.replica_max_lag_s));
  }
}

}  // namespace connector::db
