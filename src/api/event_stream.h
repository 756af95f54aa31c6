#pragma once
// What the two event endpoints share: the check that events are served here, and the internal
// location of nginx/connector-events.conf that holds a subscriber of a channel.
#include <string>
#include <string_view>

#include "api/endpoints.h"

namespace connector::api {

// Cache-Control of the hand-over (never stored: each subscription is its own).
inline constexpr std::string_view kEventStreamCacheControl = "no-store";

// Throws a 404 when this worker serves no events (events_publisher empty).
void require_events(const Services& services);

// Sends the client to the subscriber location `kind` ("record" or "address") of `channel` (the
// name domain/event_channels.h gives it, from a validated value only).
Answer event_stream(Services& services, std::string_view kind, const std::string& channel);

}  // namespace connector::api
