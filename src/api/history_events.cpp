// GET /v1/history/events: the changes of every record an address is part of (as depositor,
// sender or recipient), as server-sent events held by nginx (nchan): nothing until the next
// change; a reconnection (Last-Event-ID) gets the channel's recent buffer again.
#include "api/event_stream.h"
#include "api/params.h"
#include "chain/address.h"
#include "domain/event_channels.h"

namespace connector::api {
namespace {

constexpr ParamSpec kParams[] = {{"address", ParamKind::kAddress, /*required=*/true}};

Answer history_events(const ValidParams& params, Services& services, json::JsonWriter&) {
  require_events(services);
  return event_stream(services, "address",
                      domain::address_channel(params.get<chain::Address>("address")->lower()));
}

}  // namespace

const EndpointSpec kHistoryEventsEndpoint("/v1/history/events", kParams, kEventStreamCacheControl,
                                          history_events, EndpointSpec::Body::kEventStream);

}  // namespace connector::api
