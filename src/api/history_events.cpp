// GET /v1/history/events: the changes of every record an address is part of (as depositor,
// sender or recipient), as server-sent events held by nginx (nchan): nothing until the next
// change. A stream that comes back (Last-Event-ID) is answered the changes it has not had from
// the feed, or, when there are none, handed to the channel's recent messages and those to come.
#include "api/event_stream.h"
#include "api/params.h"
#include "chain/address.h"
#include "domain/event_channels.h"

namespace connector::api {
namespace {

constexpr ParamSpec kParams[] = {{"address", ParamKind::kAddress, /*required=*/true}};

Answer history_events(const ValidParams& params, Services& services, json::JsonWriter&) {
  require_stream(services);
  const auto after = last_event_id(services);
  const auto address = params.get<chain::Address>("address")->lower();
  const auto channel = domain::address_channel(address);
  return stream_or_retry(services, [&] {
    if (!after) return event_stream(services, "address", channel);
    return resume_stream(services, {.history_id = 0, .address = address}, *after, "address-changes",
                         channel);
  });
}

}  // namespace

const EndpointSpec kHistoryEventsEndpoint("/v1/history/events", kParams, kEventStreamCacheControl,
                                          history_events, EndpointSpec::Body::kEventStream);

}  // namespace connector::api
