// GET /v1/history/events: the changes of every record an address is part of (as depositor,
// sender or recipient), as server-sent events held by nginx (nchan): nothing until the next
// change. A reconnection (Last-Event-ID) is answered the changes it missed from the feed, or,
// when it missed none, handed to the channel.
#include "api/event_stream.h"
#include "api/params.h"
#include "chain/address.h"
#include "domain/event_channels.h"

namespace connector::api {
namespace {

constexpr ParamSpec kParams[] = {{"address", ParamKind::kAddress, /*required=*/true}};

Answer history_events(const ValidParams& params, Services& services, json::JsonWriter&) {
  require_events(services);
  const auto after = last_event_id(services);
  const auto address = params.get<chain::Address>("address")->lower();
  if (after) {
    const auto missed = services.history.address_changes(address, *after, published_upto(services),
                                                         kMissedEventsPerAnswer);
    if (!missed.empty()) return missed_events(services, missed);
  }
  return event_stream(services, "address", domain::address_channel(address));
}

}  // namespace

const EndpointSpec kHistoryEventsEndpoint("/v1/history/events", kParams, kEventStreamCacheControl,
                                          history_events, EndpointSpec::Body::kEventStream);

}  // namespace connector::api
