// GET /v1/history/hash/events: one record's changes as server-sent events, held by nginx (nchan).
// The first event is the record as it is: the channel's newest message, or, when the channel
// holds none, its state published on request by the event publisher (events/publisher.h).
#include "api/event_stream.h"
#include "api/params.h"
#include "domain/event_channels.h"
#include "http/api_error.h"

namespace connector::api {
namespace {

constexpr ParamSpec kParams[] = {{"hash", ParamKind::kRecordHash, /*required=*/true}};

Answer history_by_hash_events(const ValidParams& params, Services& services, json::JsonWriter&) {
  require_events(services);
  const auto record = services.history.find_by_hash(*params.get<std::string>("hash"));
  if (!record) throw http::ApiError(404, "not_found", "No history record has this hash", "hash");
  services.events->request_snapshot(record->id);
  return event_stream(services, "record", domain::record_channel(record->hash));
}

}  // namespace

const EndpointSpec kHistoryByHashEventsEndpoint("/v1/history/hash/events", kParams,
                                                kEventStreamCacheControl, history_by_hash_events,
                                                EndpointSpec::Body::kEventStream);

}  // namespace connector::api
