// GET /v1/history/hash/events: one record's changes as server-sent events, held by nginx (nchan).
// The first event is the record as it is: the channel's newest message, or, when the channel
// holds none, its state published on request by the event publisher (events/publisher.h). A
// reconnection (Last-Event-ID) is answered the changes it missed from the feed, or, when it
// missed none, handed to the channel for the changes to come.
#include "api/event_stream.h"
#include "api/params.h"
#include "domain/event_channels.h"
#include "http/api_error.h"

namespace connector::api {
namespace {

constexpr ParamSpec kParams[] = {{"hash", ParamKind::kRecordHash, /*required=*/true}};

Answer history_by_hash_events(const ValidParams& params, Services& services, json::JsonWriter&) {
  require_events(services);
  const auto after = last_event_id(services);
  const auto record = services.history.find_by_hash(*params.get<std::string>("hash"));
  if (!record) throw http::ApiError(404, "not_found", "No history record has this hash", "hash");
  const auto channel = domain::record_channel(record->hash);
  if (after) {
    const auto missed = services.history.record_changes(
        record->id, *after, published_upto(services), kMissedEventsPerAnswer);
    if (!missed.empty()) return missed_events(services, missed);
    return event_stream(services, "record-changes", channel);
  }
  services.events->request_snapshot(record->id);
  return event_stream(services, "record", channel);
}

}  // namespace

const EndpointSpec kHistoryByHashEventsEndpoint("/v1/history/hash/events", kParams,
                                                kEventStreamCacheControl, history_by_hash_events,
                                                EndpointSpec::Body::kEventStream);

}  // namespace connector::api
