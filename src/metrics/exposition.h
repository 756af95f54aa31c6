#pragma once
// The scoreboard and the pool's shared state (pool/shared_state.h: the servers' rotation and
// readings, the publisher) as the operations pages show them: Prometheus text for /metrics,
// and a php-fpm style status document for /status.
#include <rapidjson/stringbuffer.h>

#include <rapidjson/writer.h>

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "metrics/scoreboard.h"
#include "pool/shared_state.h"

namespace connector::metrics {

// The label of each of the board's endpoint slots in use, from the first (at most
// kEndpointSlots): the slots shown, in this order.
using EndpointLabels = std::span<const std::string_view>;

// The database servers the process reads, by address: db_replicas in order, then the primary
// (the last). Their figures are the shared state's (pool::ServerSlot).
using DbServers = std::span<const std::string>;

// Prometheus text exposition format 0.0.4.
void write_prometheus(const Scoreboard& board, const pool::SharedState& state,
                      EndpointLabels labels, DbServers servers, std::int64_t now_unix_ms,
                      rapidjson::StringBuffer& out);

// JSON: pool, start time, accepted, active/idle/total threads, max active, slow requests...
void write_status(const Scoreboard& board, const pool::SharedState& state, DbServers servers,
                  std::int64_t now_unix_ms, rapidjson::StringBuffer& out);

// A JSON array, one object per server: server, role ("replica" or "primary"), in_rotation, and
// lag_seconds (a replica's) or heartbeat_age_seconds (the primary's), null while not measured,
// with measured_unix_ms, reading_age_seconds (null: never read) and stale: the last reading is
// older than the lag monitor's round allows (a primary down or hung, the monitor stopped),
// and such a server is not shown in rotation. For /readyz and /status.
void write_db_servers(const pool::SharedState& state, DbServers servers, std::int64_t now_unix_ms,
                      rapidjson::Writer<rapidjson::StringBuffer>& w);

}  // namespace connector::metrics
