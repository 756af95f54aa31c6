#pragma once
// The event publisher's figures (pool/events_board.h) on /metrics and /status.
#include <rapidjson/stringbuffer.h>

#include <rapidjson/writer.h>

#include "pool/events_board.h"

namespace connector::metrics {

void write_events_metrics(const pool::EventsBoard& events, rapidjson::StringBuffer& out);
// {"publisher_pid" (0: none), "cursor" (null before the first start), "last_round_unix_ms",
//  and the counts}.
void write_events_status(const pool::EventsBoard& events,
                         rapidjson::Writer<rapidjson::StringBuffer>& w);

}  // namespace connector::metrics
