#include "api/event_stream.h"

#include <vector>

#include "api/change_list.h"
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
  if (!board.cursor_known.load()) return kNothingPublishedYet;
  return board.cursor.load();
}

namespace {

// Each change's record as /v1/history/hash answers it.
std::vector<std::string> rendered_records(Services& services,
                                          std::span<const db::FeedChange> changes) {
  std::vector<std::string> records;
  records.reserve(changes.size());
  rapidjson::StringBuffer buffer;
  for (const auto& change : changes) {
    buffer.Clear();
    json::JsonWriter writer(buffer);
    write_record_answer(services.reference, services.deadline, *change.record, writer);
    records.emplace_back(buffer.GetString(), buffer.GetSize());
  }
  return records;
}

}  // namespace

Answer missed_events(Services& services, std::span<const db::FeedChange> missed) {
  const auto records = rendered_records(services, missed);
  auto& body = services.missed_events;
  body.clear();
  for (std::size_t i = 0; i < missed.size(); ++i) {
    // The standard form of an event; the data is one line (RapidJSON escapes CR and LF).
    body += "id: ";
    body += std::to_string(missed[i].seq);
    body += "\ndata: ";
    body += records[i];
    body += "\n\n";
  }
  return Answer::kMissedEvents;
}

Answer change_list(Services& services, std::span<const db::FeedChange> changes,
                   json::JsonWriter& out) {
  const auto records = rendered_records(services, changes);
  std::vector<RenderedChange> list;
  list.reserve(changes.size());
  for (std::size_t i = 0; i < changes.size(); ++i) list.push_back({changes[i].seq, records[i]});
  write_change_list(out, list);
  return Answer::kUsual;
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
