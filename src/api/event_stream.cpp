#include "api/event_stream.h"

#include <limits>

#include "api/params.h"
#include "api/record_reference.h"
#include "http/api_error.h"

namespace connector::api {

void require_events(const Services& services) {
  if (services.events == nullptr) {
    throw http::ApiError(404, "not_found", "Events are not served here");
  }
}

std::optional<std::uint64_t> last_event_id(const Services& services) {
  if (services.last_event_id.empty()) return std::nullopt;
  return parse_uint64("Last-Event-ID", services.last_event_id);
}

std::uint64_t published_upto(const Services& services) {
  const auto& board = *services.events;
  if (!board.cursor_known.load()) return std::numeric_limits<std::uint64_t>::max();
  return board.cursor.load();
}

Answer missed_events(Services& services, std::span<const db::FeedChange> missed) {
  auto& body = services.missed_events;
  body.clear();
  rapidjson::StringBuffer buffer;
  for (const auto& change : missed) {
    buffer.Clear();
    json::JsonWriter writer(buffer);
    write_record_answer(services.reference, services.deadline, *change.record, writer);
    // The standard form of an event; the data is one line (RapidJSON escapes CR and LF).
    body += "id: ";
    body += std::to_string(change.seq);
    body += "\ndata: ";
    body.append(buffer.GetString(), buffer.GetSize());
    body += "\n\n";
  }
  return Answer::kMissedEvents;
}

Answer event_stream(Services& services, std::string_view kind, const std::string& channel) {
  services.event_stream = "/connector-events/";
  services.event_stream += kind;
  services.event_stream += '/';
  // Past the "h:" or "a:": the location's pattern puts it back.
  services.event_stream += std::string_view(channel).substr(2);
  return Answer::kEventStream;
}

}  // namespace connector::api
