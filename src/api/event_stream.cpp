#include "api/event_stream.h"

#include <algorithm>

#include "api/change_list.h"
#include "api/params.h"
#include "api/record_reference.h"
#include "http/api_error.h"

namespace connector::api {
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

void require_events(const Services& services) {
  if (services.events == nullptr) {
    throw http::ApiError(404, "not_found", "Events are not served here");
  }
}

domain::HistoryRecord find_record(Services& services, const std::string& hash) {
  auto record = services.history.find_by_hash(hash);
  if (!record) throw http::ApiError(404, "not_found", "No history record has this hash", "hash");
  return std::move(*record);
}

std::optional<std::uint64_t> last_event_id(const Services& services) {
  if (services.last_event_id.empty()) return std::nullopt;
  return parse_uint64("Last-Event-ID", services.last_event_id);
}

std::optional<std::uint64_t> published_point(Services& services) {
  const auto& board = *services.events;
  if (!board.cursor_known.load()) return std::nullopt;
  const std::uint64_t published = board.cursor.load();
  // Read after the cursor: a server that holds the feed that far now holds it from then on.
  if (services.history.feed_end() < published) return std::nullopt;
  return published;
}

std::optional<std::vector<db::FeedChange>> changes_after(Services& services,
                                                         const Followed& followed,
                                                         std::uint64_t after) {
  const auto upto = published_point(services);
  if (!upto) return std::nullopt;
  auto changes = followed.address.empty()
                     ? services.history.record_changes(followed.history_id, after, *upto,
                                                       kMissedEventsPerAnswer)
                     : services.history.address_changes(followed.address, after, *upto,
                                                        kMissedEventsPerAnswer);
  // A row without a state (written before 0007 for a record deleted since) has nothing to show.
  std::erase_if(changes, [](const db::FeedChange& change) { return !change.record; });
  return changes;
}

Answer stream_events(Services& services, std::span<const db::FeedChange> changes) {
  const auto records = rendered_records(services, changes);
  auto& body = services.missed_events;
  body.clear();
  if (changes.empty()) body = ": again shortly\n\n";
  for (std::size_t i = 0; i < changes.size(); ++i) {
    // The standard form of an event; the data is one line (RapidJSON escapes CR and LF).
    body += "id: ";
    body += std::to_string(changes[i].seq);
    body += "\ndata: ";
    body += records[i];
    body += "\n\n";
  }
  return Answer::kMissedEvents;
}

Answer change_list(Services& services, std::span<const db::FeedChange> changes,
                   std::optional<std::uint64_t> after, json::JsonWriter& out) {
  const auto records = rendered_records(services, changes);
  std::vector<RenderedChange> list;
  list.reserve(changes.size());
  for (std::size_t i = 0; i < changes.size(); ++i) list.push_back({changes[i].seq, records[i]});
  write_change_list(out, list, after);
  return Answer::kUsual;
}

void poll_later() {
  throw db::DatabaseUnavailable(
      "the change feed cannot be answered from yet (the event publisher's first round, or "
      "this read server behind the publisher's)");
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
