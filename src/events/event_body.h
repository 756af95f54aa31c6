#pragma once
// The body of the message the publisher sends nchan for a change: the record as
// /v1/history/hash answers it, then a lone CR and `id: <seq>`. nchan writes each line of a body
// (it splits on LF only) as a `data:` line after its own `id:` line; an EventSource parser also
// ends a line at a lone CR, so the event's data is the record's JSON exactly and its id, the
// last one given, our seq (nchan 1.3 lets no publisher set the id itself).
#include <cstdint>
#include <string>
#include <string_view>

namespace connector::events {

// Throws std::invalid_argument when the JSON holds a CR or LF (RapidJSON escapes them inside
// strings, so it never does).
std::string event_body(std::string_view record_json, std::uint64_t seq);

}  // namespace connector::events
