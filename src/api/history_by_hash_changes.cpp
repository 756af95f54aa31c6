// GET /v1/history/hash/changes: one record's changes by long-polling, for clients without
// EventSource. Without `after`: the record as it is now, at once, and where to poll from next.
// With `after` (where the client is): the changes after it that this node has published, at
// once, from the feed; or, when there are none, the request is handed to nginx (nchan), which
// answers an empty list when the record changes or after its time, and the client asks again.
#include "api/event_stream.h"
#include "api/params.h"
#include "domain/event_channels.h"

namespace connector::api {
namespace {

constexpr ParamSpec kParams[] = {{"hash", ParamKind::kRecordHash, /*required=*/true},
                                 {"after", ParamKind::kUint64}};

Answer history_by_hash_changes(const RequestContext& request, const Services& services,
                               json::JsonWriter& out) {
  const ValidParams& params = request.params;
  require_events(services);
  const auto after = params.get<std::uint64_t>("after");
  const auto record = find_record(services, *params.get<std::string>("hash"));
  if (!after) {
    // The point first, the record after it: its state then holds every change up to there.
    const auto upto = poll_point(services);
    const auto state = services.history.record_state(record.id);
    if (!state) return change_list(services, request, {}, upto, out);  // deleted meanwhile
    const db::FeedChange now{state->seq, state->record};
    return change_list(services, request, {&now, 1}, std::max(upto, state->seq), out);
  }
  return resume_poll(services, request, {.history_id = record.id, .address = {}}, *after,
                     "poll-record", domain::record_channel(record.hash), out);
}

}  // namespace

const EndpointSpec kHistoryByHashChangesEndpoint("/v1/history/hash/changes", kParams,
                                                 kEventStreamCacheControl, history_by_hash_changes,
                                                 EndpointSpec::Body::kLongPoll);

}  // namespace connector::api
