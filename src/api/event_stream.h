#pragma once
// What the event endpoints (streams and long-polls) share: the check that events are served
// here, how far this node has published, the changes a client missed as events or as a change
// list, and the hand-over to the internal location of nginx/connector-events.conf that holds a
// subscriber of a channel.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "api/endpoints.h"
#include "db/change_feed.h"

namespace connector::api {

// Cache-Control of the hand-over and of missed events (never stored: each is its own).
inline constexpr std::string_view kEventStreamCacheControl = "no-store";

// The most missed changes one answer carries: the client reconnects for the rest.
inline constexpr std::uint32_t kMissedEventsPerAnswer = 100;

// Throws a 404 when this worker serves no events (events_publisher empty).
void require_events(const Services& services);

// The seq a reconnecting EventSource last received (its Last-Event-ID); none on a first
// connection. Every id this service sends is a seq, so anything else is a 400.
std::optional<std::uint64_t> last_event_id(const Services& services);

// The last change the node's publisher has published: what a reconnection is answered up to
// (a newer one reaches the stream it is then handed to). Before the publisher's first round
// after a start, no bound (the whole feed): a change may then come twice, never not at all.
std::uint64_t published_upto(const Services& services);
inline constexpr std::uint64_t kNothingPublishedYet = ~std::uint64_t{0};  // what it is then

// Missed changes (not empty) as the answer's events, each as the publisher sent it: its
// record as /v1/history/hash answers it, and its seq as the id.
Answer missed_events(Services& services, std::span<const db::FeedChange> missed);

// Changes as a long-poll's answer (api/change_list.h), each as the publisher sent it.
Answer change_list(Services& services, std::span<const db::FeedChange> changes,
                   json::JsonWriter& out);

// Sends the client to the subscriber location `kind` of `channel` (the name
// domain/event_channels.h gives it, from a validated value only): the streams "record" (the
// record's state first), "record-changes" (its changes only) and "address", the long-polls
// "poll-record" and "poll-address".
Answer event_stream(Services& services, std::string_view kind, const std::string& channel);

}  // namespace connector::api
