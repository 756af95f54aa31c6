// GET /v1/history/changes: the changes of every record an address is part of, by long-polling,
// for clients without EventSource. With `after` (the last seq the client has): the changes
// after it that this node has published, at once, from the feed; otherwise, or when there are
// none, the request is handed to nginx (nchan), which answers the next change, or an empty
// list when none comes within its timeout.
#include "api/event_stream.h"
#include "api/params.h"
#include "chain/address.h"
#include "domain/event_channels.h"

namespace connector::api {
namespace {

constexpr ParamSpec kParams[] = {{"address", ParamKind::kAddress, /*required=*/true},
                                 {"after", ParamKind::kUint64}};

Answer history_changes(const ValidParams& params, Services& services, json::JsonWriter& out) {
  require_events(services);
  const auto address = params.get<chain::Address>("address")->lower();
  if (const auto after = params.get<std::uint64_t>("after")) {
    const auto missed = services.history.address_changes(address, *after, published_upto(services),
                                                         kMissedEventsPerAnswer);
    if (!missed.empty()) return change_list(services, missed, out);
  }
  return event_stream(services, "poll-address", domain::address_channel(address));
}

}  // namespace

const EndpointSpec kHistoryChangesEndpoint("/v1/history/changes", kParams, kEventStreamCacheControl,
                                           history_changes, EndpointSpec::Body::kLongPoll);

}  // namespace connector::api
