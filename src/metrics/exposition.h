#pragma once
// The scoreboard as the operations pages show it: Prometheus text for /metrics, and a php-fpm
// style status document for /status.
#include <rapidjson/stringbuffer.h>

#include <cstdint>
#include <span>
#include <string_view>

#include "metrics/scoreboard.h"

namespace connector::metrics {

// The label of each of the board's endpoint slots (kEndpointSlots of them).
using EndpointLabels = std::span<const std::string_view, kEndpointSlots>;

// Prometheus text exposition format 0.0.4.
void write_prometheus(const Scoreboard& board, EndpointLabels labels, rapidjson::StringBuffer& out);

// JSON: pool, start time, accepted, active/idle/total threads, max active, slow requests...
void write_status(const Scoreboard& board, std::int64_t now_unix, rapidjson::StringBuffer& out);

}  // namespace connector::metrics
