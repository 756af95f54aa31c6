#pragma once
// One server-sent event of a change, as the API writes it everywhere: `id: <seq>`, then
// `data: ` and the record as /v1/history/hash answers it, each line ended by LF. The publisher
// sends these bytes to the events nginx, whose raw stream adds the blank line that ends an event
// (nginx/connector-events-nginx.conf); the worker's own answer to a reconnection writes the same
// bytes and the blank line (api/event_stream.h). A client that splits on LF gets the JSON alone.
#include <cstdint>
#include <string>
#include <string_view>

namespace connector::http {

// Throws std::invalid_argument when the JSON holds a CR or LF (RapidJSON escapes them inside
// strings, so it never does): it must be the one data line.
std::string server_sent_event(std::string_view record_json, std::uint64_t seq);

// The comment the publisher sends every stream now and then (the "ping" channel): it keeps an
// idle stream under proxies' read timeouts and lets nginx find a client gone.
inline constexpr std::string_view kPingBody = ": ping\n";

}  // namespace connector::http
