#pragma once
// The event publisher's figures and state (metrics/events_counters.h, pool/events_board.h) on
// /metrics and /status.
#include <rapidjson/stringbuffer.h>

#include <rapidjson/writer.h>

#include "metrics/events_counters.h"
#include "pool/events_board.h"

namespace connector::metrics {

void write_events_metrics(const pool::EventsBoard& events, const EventsCounters& counts,
                          rapidjson::StringBuffer& out);
// {"publisher_pid" (0: none), "cursor" (null before the first start), "last_round_unix_ms",
//  and the counts}.
void write_events_status(const pool::EventsBoard& events, const EventsCounters& counts,
                         rapidjson::Writer<rapidjson::StringBuffer>& w);

}  // namespace connector::metrics
