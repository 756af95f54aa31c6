// GET /v1/history/hash/events: one record's changes as server-sent events, held by nginx (nchan).
// The first event is the record as it is: the channel's newest message, or, when the channel
// holds none, its state published on request by the event publisher (events/publisher.h). A
// stream that comes back (Last-Event-ID) is answered the changes it has not had from the feed,
// or, when there are none, handed to the channel's recent messages and those to come.
#include <utility>

#include "api/event_stream.h"
#include "api/params.h"
#include "domain/event_channels.h"

namespace connector::api {
namespace {

constexpr ParamSpec kParams[] = {{"hash", ParamKind::kRecordHash, /*required=*/true}};

Answer history_by_hash_events(const RequestContext& request, const Services& services,
                              json::JsonWriter&) {
  const ValidParams& params = request.params;
  require_stream(services, request);
  const auto after = last_event_id(request);
  return stream_or_retry(services, request, [&] {
    const auto record = find_record(services, *params.get<std::string>("hash"));
    auto channel = domain::record_channel(record.hash);
    if (!after) {
      auto answer = event_stream(services, "record", std::move(channel));
      // Only for a subscriber nchan will hold: a HEAD is answered by the router, never held.
      if (!request.head) services.events->request_initial_state(record.id);
      return answer;
    }
    return resume_stream(services, request, {.history_id = record.id, .address = {}}, *after,
                         "record-changes", std::move(channel));
  });
}

}  // namespace

const EndpointSpec kHistoryByHashEventsEndpoint("/v1/history/hash/events", kParams,
                                                kEventStreamCacheControl, history_by_hash_events,
                                                EndpointSpec::Body::kEventStream);

}  // namespace connector::api
