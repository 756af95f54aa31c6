#pragma once
// What the event endpoints (streams and long-polls) share: the check that events are served
// here, how far this node can answer from the change feed, the changes a client has not had
// (as events, or as a change list), and the hand-over to the internal location of
// nginx/connector-events.conf that holds a subscriber of a channel.
#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "api/endpoints.h"
#include "db/change_feed.h"

namespace connector::api {

// Cache-Control of every answer of those paths (never stored: each is its own).
inline constexpr std::string_view kEventStreamCacheControl = "no-store";

// The most changes one answer carries: the client comes back for the rest.
inline constexpr std::uint32_t kMissedEventsPerAnswer = 100;

// Throws a 404 when this worker serves no events (events_publisher empty).
void require_events(const Services& services);

// require_events for an event stream, and then what it cannot serve, refused as the API's JSON
// errors before any initial state is asked for or anything is handed over: a request for a
// WebSocket (an Upgrade header) is a 400, and one whose Accept does not hold "text/event-stream" a
// 406.
void require_stream(const Services& services, const RequestContext& request);

// The record a hash names; a 404 when none does.
domain::HistoryRecord find_record(const Services& services, const std::string& hash);

// The seq a reconnecting EventSource last received (its Last-Event-ID); none on a first
// connection. Every id this service sends is a seq, so anything else is a 400.
std::optional<std::uint64_t> last_event_id(const RequestContext& request);

// How far this node can answer from the feed: the last change its publisher has published
// (everything up to there went out, or the hand-over's nchan location gets it), when its read
// server holds the feed that far. None before the publisher's first round after a start, or
// while this thread's read server is behind the publisher's: the client asks again shortly.
std::optional<std::uint64_t> published_point(const Services& services);

// One record (history.id) or one address (lower case): whose changes a client follows.
struct Followed {
  std::uint64_t history_id = 0;
  std::string address;  // "" for a record
};

// The stream's answer from the worker itself, text/event-stream: the changes (each as the
// publisher sent it: its record as /v1/history/hash answers it, its seq as the id), then the
// end; the EventSource comes back with the last id. With no changes, only a comment: the
// client comes back after its retry delay (a stream never answers 503, which would stop a
// browser's EventSource for good).
Answer stream_events(const Services& services, const RequestContext& request,
                     std::span<const db::FeedChange> changes);

// A stream's answer, `answer` run: a database that cannot answer is an empty stream (above).
template <typename Work>
Answer stream_or_retry(const Services& services, const RequestContext& request, Work&& answer) {
  try {
    return answer();
  } catch (const db::DatabaseUnavailable&) {
    return stream_events(services, request, {});
  }
}

// A long-poll's answer (json/change_list.h): the changes, and where to poll from next.
Answer change_list(const Services& services, const RequestContext& request,
                   std::span<const db::FeedChange> changes, std::optional<std::uint64_t> after,
                   json::JsonWriter& out);

// published_point for a long-poll's first answer: a 503 with Retry-After when there is none.
std::uint64_t poll_point(const Services& services);

// The longest a returning stream's answer may take, from the read of the cursor, and still be
// handed to the channel's recent messages (kept 2 s: nginx/connector-events-nginx.conf).
inline constexpr std::chrono::milliseconds kHandOverWithin{1000};

// A stream that came back after `after` (Last-Event-ID): the changes it missed; none, the
// hand-over to `kind` (its channel's recent messages, then those to come); not answerable yet,
// answered too slowly for that, or `after` so recent that the channel may still hold it
// (pool::EventsBoard::settled_cursor), an empty stream (the client comes back).
Answer resume_stream(const Services& services, const RequestContext& request,
                     const Followed& followed, std::uint64_t after, std::string_view kind,
                     std::string channel);

// A long-poll from `after`: the changes after it; none, the hand-over to `kind` (nginx wakes it
// when the channel changes); not answerable yet, a 503.
Answer resume_poll(const Services& services, const RequestContext& request,
                   const Followed& followed, std::uint64_t after, std::string_view kind,
                   std::string channel, json::JsonWriter& out);

// Sends the client to the subscriber location `kind` of `channel` (the name
// domain/event_channels.h gives it, from a validated value only): the streams "record" (the
// record's state first), "record-changes" and "address-changes" (a returning stream: the changes
// kept a moment, then those to come) and "address" (those to come); the long-polls
// "poll-record" and "poll-address". While nchan is full (pool/events_board.h): a
// db::DatabaseUnavailable, which a stream answers with an empty stream (stream_or_retry) and a
// long-poll with a 503 and Retry-After.
Answer event_stream(const Services& services, std::string_view kind, std::string channel);

}  // namespace connector::api
