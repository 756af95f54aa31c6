// GET /v1/history/changes: the changes of every record an address is part of, by long-polling,
// for clients without EventSource. Without `after`: at once, where to poll from (how far this
// node has published). With `after`: the changes after it that this node has published, at
// once, from the feed; or, when there are none, the request is handed to nginx (nchan), which
// answers an empty list when a record of the address changes or after its time, and the client
// asks again.
#include "api/event_stream.h"
#include "api/params.h"
#include "chain/address.h"
#include "domain/event_channels.h"

namespace connector::api {
namespace {

constexpr ParamSpec kParams[] = {{"address", ParamKind::kAddress, /*required=*/true},
                                 {"after", ParamKind::kUint64}};

Answer history_changes(const RequestContext& request, const Services& services,
                       json::JsonWriter& out) {
  const ValidParams& params = request.params;
  require_events(services);
  const auto address = params.get<chain::Address>("address")->lower();
  const auto after = params.get<std::uint64_t>("after");
  if (!after) {
    return change_list(services, request, {}, poll_point(services), out);
  }
  return resume_poll(services, request, {.history_id = 0, .address = address}, *after,
                     "poll-address", domain::address_channel(address), out);
}

}  // namespace

const EndpointSpec kHistoryChangesEndpoint("/v1/history/changes", kParams, kEventStreamCacheControl,
                                           history_changes, EndpointSpec::Body::kLongPoll);

}  // namespace connector::api
