#include "api/event_stream.h"

#include <algorithm>
#include <chrono>
#include <utility>

#include "api/params.h"
#include "http/api_error.h"
#include "http/server_sent_event.h"
#include "json/change_list.h"
#include "json/history_writer.h"
#include "pool/events_board.h"
#include "util/clock.h"

namespace connector::api {
namespace {

// Each change's record as /v1/history/hash answers it.
std::vector<std::string> rendered_records(const Services& services, const RequestContext& request,
                                          std::span<const db::FeedChange> changes) {
  std::vector<std::string> records;
  records.reserve(changes.size());
  rapidjson::StringBuffer buffer;
  for (const auto& change : changes) {
    buffer.Clear();
    json::JsonWriter writer(buffer);
    json::write_record_answer(writer, *change.record,
                              *services.reference.covering(*change.record, request.deadline));
    records.emplace_back(buffer.GetString(), buffer.GetSize());
  }
  return records;
}

// A long-poll that cannot be answered yet: a 503 with Retry-After.
[[noreturn]] void poll_later() {
  throw db::DatabaseUnavailable(
      "the change feed cannot be answered from yet (the event publisher's first round, or "
      "this read server behind the publisher's)");
}

}  // namespace

void require_events(const Services& services) {
  if (services.events == nullptr) {
    throw http::ApiError(404, "not_found", "Events are not served here");
  }
}

namespace {

bool asks_for_websocket(std::string_view upgrade) {
  constexpr std::string_view kWebSocket = "websocket";  // letters only: | 0x20 lowers them
  const auto same_letter = [](char given, char lower) { return (given | 0x20) == lower; };
  return std::search(upgrade.begin(), upgrade.end(), kWebSocket.begin(), kWebSocket.end(),
                     same_letter) != upgrade.end();
}

}  // namespace

void require_stream(const Services& services, const RequestContext& request) {
  require_events(services);
  // A WebSocket (Upgrade: websocket, any case) is not served here; any other upgrade (curl's
  // h2c over plain HTTP) nginx ignores.
  if (asks_for_websocket(request.upgrade)) {
    throw http::invalid_parameter("Upgrade",
                                  "This path is a server-sent event stream: it takes no Upgrade "
                                  "(no WebSocket)");
  }
  if (request.accept.find("text/event-stream") == std::string_view::npos) {
    throw http::ApiError(406, "not_acceptable",
                         "This path answers text/event-stream only: send Accept: "
                         "text/event-stream",
                         "Accept");
  }
}

domain::HistoryRecord find_record(const Services& services, const std::string& hash) {
  auto record = services.history.find_by_hash(hash);
  if (!record) throw http::ApiError(404, "not_found", "No history record has this hash", "hash");
  return std::move(*record);
}

std::optional<std::uint64_t> last_event_id(const RequestContext& request) {
  if (request.last_event_id.empty()) return std::nullopt;
  return parse_uint64("Last-Event-ID", request.last_event_id);
}

std::optional<std::uint64_t> published_point(const Services& services) {
  const auto& board = *services.events;
  if (!board.cursor_known.load()) return std::nullopt;
  const std::uint64_t published = board.cursor.load();
  // Read after the cursor: a server that holds the feed that far now holds it from then on.
  // An empty feed (trimmed: nothing changed for a day) has nothing to answer, and is no lag.
  const std::uint64_t held = services.history.feed_end();
  if (held != 0 && held < published) return std::nullopt;
  return published;
}

namespace {

// The changes of `followed` after `after` up to published_point (at most
// kMissedEventsPerAnswer), in seq order, each with its record (the reads pass over rows
// without a state); none when published_point is none.
std::optional<std::vector<db::FeedChange>> changes_after(const Services& services,
                                                         const Followed& followed,
                                                         std::uint64_t after) {
  const auto upto = published_point(services);
  if (!upto) return std::nullopt;
  return followed.address.empty() ? services.history.record_changes(followed.history_id, after,
                                                                    *upto, kMissedEventsPerAnswer)
                                  : services.history.address_changes(followed.address, after, *upto,
                                                                     kMissedEventsPerAnswer);
}

}  // namespace

Answer resume_stream(const Services& services, const RequestContext& request,
                     const Followed& followed, std::uint64_t after, std::string_view kind,
                     std::string channel) {
  const auto started = std::chrono::steady_clock::now();
  const auto missed = changes_after(services, followed, after);
  if (!missed) return stream_events(services, request, {});  // the client comes back shortly
  if (!missed->empty()) return stream_events(services, request, *missed);
  // What it had may still be among the channel's recent messages: it would get it again.
  if (after > services.events->settled_cursor.load()) return stream_events(services, request, {});
  // The channel keeps what was published after our read of the cursor only a moment: a slow
  // answer might reach nchan after it is gone, so the client comes back instead.
  if (std::chrono::steady_clock::now() - started > kHandOverWithin) {
    return stream_events(services, request, {});
  }
  return event_stream(services, kind, std::move(channel));
}

Answer resume_poll(const Services& services, const RequestContext& request,
                   const Followed& followed, std::uint64_t after, std::string_view kind,
                   std::string channel, json::JsonWriter& out) {
  const auto missed = changes_after(services, followed, after);
  if (!missed) poll_later();
  if (!missed->empty()) return change_list(services, request, *missed, missed->back().seq, out);
  return event_stream(services, kind, std::move(channel));
}

Answer stream_events(const Services& services, const RequestContext& request,
                     std::span<const db::FeedChange> changes) {
  const auto records = rendered_records(services, request, changes);
  // The delay of the client's next try, as browsers have it by default (set: a client that
  // would come back at once must not spin).
  std::string body = "retry: 3000\n";
  if (changes.empty()) body += ": again shortly\n\n";
  for (std::size_t i = 0; i < changes.size(); ++i) {
    // The bytes the publisher sent for it, and the blank line that ends an event.
    body += http::server_sent_event(records[i], changes[i].seq);
    body += '\n';
  }
  return Answer::missed(std::move(body));
}

Answer change_list(const Services& services, const RequestContext& request,
                   std::span<const db::FeedChange> changes, std::optional<std::uint64_t> after,
                   json::JsonWriter& out) {
  const auto records = rendered_records(services, request, changes);
  std::vector<json::RenderedChange> list;
  list.reserve(changes.size());
  for (std::size_t i = 0; i < changes.size(); ++i) list.push_back({changes[i].seq, records[i]});
  json::write_change_list(out, list, after);
  return Answer::kUsual;
}

std::uint64_t poll_point(const Services& services) {
  const auto point = published_point(services);
  if (!point) poll_later();
  return *point;
}

Answer event_stream(const Services& services, std::string_view kind, std::string channel) {
  // Not the database, but the same answer: come back shortly (pool/events_board.h).
  if (services.events->store_full_until_ms.load() > util::monotonic_ms()) {
    throw db::DatabaseUnavailable("nchan's shared memory is full: no subscriber handed over");
  }
  if (!services.events->events_nginx_answers.load()) {
    throw db::DatabaseUnavailable("the events nginx does not answer: no subscriber handed over");
  }
  return Answer::hand_over(kind, std::move(channel));
}

}  // namespace connector::api
