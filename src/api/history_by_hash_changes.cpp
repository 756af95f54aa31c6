// GET /v1/history/hash/changes: one record's changes by long-polling, for clients without
// EventSource. Without `after`: the record as it is now, at once. With `after` (the last seq
// the client has): the changes after it that this node has published, at once, from the feed;
// or, when there are none, the request is handed to nginx (nchan), which answers the next
// change, or an empty list when none comes within its timeout.
#include "api/event_stream.h"
#include "api/params.h"
#include "domain/event_channels.h"
#include "http/api_error.h"

namespace connector::api {
namespace {

constexpr ParamSpec kParams[] = {{"hash", ParamKind::kRecordHash, /*required=*/true},
                                 {"after", ParamKind::kUint64}};

Answer history_by_hash_changes(const ValidParams& params, Services& services,
                               json::JsonWriter& out) {
  require_events(services);
  // Read before the record: its state then holds every change published up to here.
  const std::uint64_t upto = published_upto(services);
  const auto record = services.history.find_by_hash(*params.get<std::string>("hash"));
  if (!record) throw http::ApiError(404, "not_found", "No history record has this hash", "hash");
  const auto after = params.get<std::uint64_t>("after");
  if (!after) {
    // Its seq is where the next poll goes on from (0 before the publisher's first round: the
    // record's changes in the feed come again, none is missed).
    const db::FeedChange now{upto == kNothingPublishedYet ? 0 : upto, *record};
    return change_list(services, {&now, 1}, out);
  }
  const auto missed =
      services.history.record_changes(record->id, *after, upto, kMissedEventsPerAnswer);
  if (!missed.empty()) return change_list(services, missed, out);
  return event_stream(services, "poll-record", domain::record_channel(record->hash));
}

}  // namespace

const EndpointSpec kHistoryByHashChangesEndpoint("/v1/history/hash/changes", kParams,
                                                 kEventStreamCacheControl, history_by_hash_changes,
                                                 EndpointSpec::Body::kLongPoll);

}  // namespace connector::api
