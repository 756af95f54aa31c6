// GET /v1/history/events: the changes of every record an address is part of (as depositor,
// sender or recipient), as server-sent events held by nginx (nchan): nothing until the next
// change. A stream that comes back (Last-Event-ID) is answered the changes it has not had from
// the feed, or, when there are none, handed to the channel's recent messages and those to come.
#include <utility>

#include "api/event_stream.h"
#include "api/params.h"
#include "chain/address.h"
#include "domain/event_channels.h"

namespace connector::api {
namespace {

constexpr ParamSpec kParams[] = {{"address", ParamKind::kAddress, /*required=*/true}};

Answer history_events(const RequestContext& request, const Services& services, json::JsonWriter&) {
  const ValidParams& params = request.params;
  require_stream(services, request);
  const auto after = last_event_id(request);
  const auto address = params.get<chain::Address>("address")->lower();
  auto channel = domain::address_channel(address);
  return stream_or_retry(services, request, [&] {
    if (!after) return event_stream(services, "address", std::move(channel));
    return resume_stream(services, request, {.history_id = 0, .address = address}, *after,
                         "address-changes", std::move(channel));
  });
}

}  // namespace

const EndpointSpec kHistoryEventsEndpoint("/v1/history/events", kParams, kEventStreamCacheControl,
                                          history_events, EndpointSpec::Body::kEventStream);

}  // namespace connector::api
