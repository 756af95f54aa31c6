#pragma once
// The endpoints (CONNECTOR_API_ENDPOINTS below lists them), each described once in its own
// file (EndpointSpec). The router validates a request's parameters against the description; the
// handler asks the database interfaces, writes its JSON body and says which of the described
// cache policies applies to it (Answer); errors are thrown (http::ApiError,
// db::DatabaseUnavailable) and answered in one place, the router.
#include <chrono>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "db/interfaces.h"
#include "db/refreshed_reference.h"
#include "db/refreshed_supply.h"
#include "http/query_string.h"
#include "json/json_writer.h"
#include "pool/events_board.h"
#include "pool/shared_state.h"

namespace connector::api {

// What an endpoint may use, for as long as its thread lives: the thread's history reader,
// deposit accounts and readiness check (db/interfaces.h, over its read and write connections),
// the process's refreshed copies (db/refreshed.h) and the pool's shared state. Nothing of a request
// is here (RequestContext).
struct Services {
  db::HistoryReader& history;
  db::DepositAccounts& accounts;
  db::ReadinessCheck& readiness;
  db::RefreshedReference& reference;
  db::RefreshedSupply& supply;
  // The pool's shared state (pool/shared_state.h), as the operations pages show it: the
  // servers' rotation and readings, the publisher's cursor.
  const pool::SharedState& pool_state;
  // The database servers the process reads, for the operations pages (metrics::DbServers).
  std::span<const std::string> db_servers = {};
  // The event publisher's part of the pool's state when events are served (events_publisher
  // set), else null.
  pool::EventsBoard* events = nullptr;
};

class ValidParams;  // api/params.h

// One request as a handler sees it: read only, valid for the handler's call (views into the
// request's bytes).
struct RequestContext {
  const ValidParams& params;  // the described parameters, validated
  // The end of the request's time budget: what waits on the database or on a reload stops there.
  std::chrono::steady_clock::time_point deadline;
  // The Last-Event-ID header, "" when it has none.
  std::string_view last_event_id;
  // The Accept and Upgrade headers, null views when absent, and whether it is a HEAD: an event
  // stream checks them before any hand-over.
  std::string_view accept;
  std::string_view upgrade;
  bool head;
};

// How an endpoint's answers may be cached: the Cache-Control of its answers (and of their 304s),
// and, for an endpoint some of whose answers never change again, the one of those. The router
// sets it from the description (a handler only says which applies: Answer), so no answer can
// differ from what the description, and so docs/openapi.yaml, says. Errors are never cached
// (no-store, the router's).
struct CachePolicy {
  constexpr CachePolicy(std::string_view cache_control,  // NOLINT: a plain policy converts
                        std::string_view final_cache_control = {})
      : cache_control(cache_control), final_cache_control(final_cache_control) {}
  // Answers nginx never stores, whatever Cache-Control lets clients do.
  static constexpr CachePolicy not_front_cached(std::string_view cache_control) {
    CachePolicy policy(cache_control);
    policy.front_cached = false;
    return policy;
  }
  std::string_view cache_control;
  std::string_view final_cache_control;  // "" when no answer of the endpoint is final
  // Whether nginx (the front cache) may store the answers, as Cache-Control allows: not those
  // of an endpoint that must reach the worker every time (the deposit addresses: recorded for
  // the chain watchers before each answer). scripts/nginx-contract leaves such an endpoint out
  // of nginx's cache rules and connector-cache-rules.conf turns the cache off for it
  // (test_nginx). The event paths' answers are never stored either way (EndpointSpec::Body).
  bool front_cached = true;
};

// What a handler hands back: which of its endpoint's cache policies applies, and for the two
// event answers what the router needs beyond the body the handler wrote.
struct Answer {
  enum class Kind : std::uint8_t {
    kUsual,  // the usual Cache-Control
    kFinal,  // will not change again: the final Cache-Control (the description must have one)
    // The usual Cache-Control, but the front cache (nginx) does not store it: it gets
    // X-Accel-Expires: 0, which nginx reads and does not pass on (clients and other caches
    // still follow Cache-Control).
    kNotFrontCached,
    // No body: nginx hands the connection to the subscriber location `subscriber` of `channel`
    // (X-Accel-Redirect: redirect_header()), which passes it to the events nginx, where nchan
    // holds it (nginx/connector-events.conf): an event stream, or a long-poll.
    kEventStream,
    // A subscriber that came back after an id (Last-Event-ID) and missed changes: they are the
    // body (`events`, text/event-stream, never cached), and the stream ends; the client
    // reconnects with the last id and gets the rest.
    kMissedEvents,
  };
  // Spelled out, not `using enum`: GCC 12 fails on that inside templates.
  static constexpr Kind kUsual = Kind::kUsual;
  static constexpr Kind kFinal = Kind::kFinal;
  static constexpr Kind kNotFrontCached = Kind::kNotFrontCached;
  static constexpr Kind kEventStream = Kind::kEventStream;
  static constexpr Kind kMissedEvents = Kind::kMissedEvents;

  Answer(Kind kind) : kind(kind) {}  // NOLINT: `return Answer::kUsual;` reads best
  static Answer hand_over(std::string_view subscriber, std::string channel);
  static Answer missed(std::string events);

  // The X-Accel-Redirect header line of a kEventStream, in one allocation.
  std::string redirect_header() const;

  Kind kind;
  std::string_view subscriber = {};  // kEventStream: a kind of event_stream() (static text)
  std::string channel = {};          // kEventStream: the channel's name (domain/event_channels.h)
  std::string events = {};           // kMissedEvents: the body
};

// What a parameter's value must be: the validator that reads it (api/params.h), and so its
// schema in docs/openapi.yaml (openapi_schema(); test_endpoint_descriptions compares them).
enum class ParamKind : std::uint8_t {
  kUint64,         // an unsigned decimal integer below 2^64
  kPageSize,       // the same; 0 is the default (20), above 100 served as 100
  kAddress,        // 0x and 40 hex digits, any case
  kTxHash,         // 0x and 64 hex digits, any case
  kRecordHash,     // 64 hex digits, with or without 0x
  kSlug,           // the slug of one of this deployment's chains
  kHistoryStatus,  // Deposit, Pending, Confirmed or Error, any case
  kSortOrder,      // ASC or DESC, any case
};
// The component schema of docs/openapi.yaml that describes a kind's values.
std::string_view openapi_schema(ParamKind kind);

// One query parameter an endpoint knows: every other name is ignored.
struct ParamSpec {
  std::string_view name;
  ParamKind kind;
  bool required = false;
  // The member of the answer that echoes the value ("" when not echoed): as the client wrote
  // it, or "" when absent (a status in its canonical spelling).
  std::string_view echo = {};
  // The value an absent (or empty) parameter stands for, in its canonical spelling ("" when
  // absent means none: a filter not set). The validator reads it as if it were sent, so the
  // handler gets the value (ValidParams::get), though the echo stays ""; nginx's cache key
  // writes it out (scripts/nginx-contract), so a request that spells it and one that leaves it
  // out share one answer; docs/openapi.yaml states it as the default.
  std::string_view absent_means = {};
};

using Handler = Answer (*)(const RequestContext& request, const Services& services,
                           json::JsonWriter& out);

// An endpoint, described once: its path, the parameters it knows (in the order they are
// checked and echoed), its cache policy (the handler's Answer says which part applies), and
// its handler, which gets the parameters validated. The router,
// the metrics labels, the unknown-parameter rule and the tests derive from these.
struct EndpointSpec {
  // What a 200 is: a JSON document (with ETag, 304, nginx's cache); an event stream that nchan
  // serves after the worker's hand-over (Answer::kEventStream) or the worker's missed events
  // (Answer::kMissedEvents); or a long-poll's JSON, the worker's (Answer::kUsual) or nchan's
  // after the hand-over (Answer::kEventStream). The last two are never cached.
  enum class Body : std::uint8_t { kJson, kEventStream, kLongPoll };

  EndpointSpec(std::string_view path, std::span<const ParamSpec> params, CachePolicy cache,
               Handler handler, Body body = Body::kJson);
  std::string_view path;
  std::span<const ParamSpec> params;
  CachePolicy cache;
  Handler handler;
  Body body;
  std::vector<std::string_view> names;  // the parameters' names (http::QueryParams takes them)
};

// The endpoints, one line each: adding one is its file and its line here (the only
// registration). This order is kEndpoints' (router.h), and so the metrics' slots and the order
// of /metrics: append, so that existing series keep their place.
#define CONNECTOR_API_ENDPOINTS(X) \
  X(kNetworksEndpoint)             \
  X(kConnectsEndpoint)             \
  X(kPairsEndpoint)                \
  X(kAccountEndpoint)              \
  X(kHistoryEndpoint)              \
  X(kHistoryByHashEndpoint)        \
  X(kChainSupplyEndpoint)          \
  X(kHistoryEventsEndpoint)        \
  X(kHistoryByHashEventsEndpoint)  \
  X(kHistoryChangesEndpoint)       \
  X(kHistoryByHashChangesEndpoint)

// Each defined in its endpoint file.
#define CONNECTOR_API_DECLARE_ENDPOINT(name) extern const EndpointSpec name;
CONNECTOR_API_ENDPOINTS(CONNECTOR_API_DECLARE_ENDPOINT)
#undef CONNECTOR_API_DECLARE_ENDPOINT

// Cache-Control values of docs/openapi.yaml; ops override them in nginx.
inline constexpr std::string_view kReferenceCacheControl = "public, max-age=60";
inline constexpr std::string_view kAccountCacheControl = "public, max-age=86400, immutable";
inline constexpr std::string_view kHistoryCacheControl = "public, max-age=2";
inline constexpr std::string_view kFinalRecordCacheControl = "public, max-age=3600";
inline constexpr std::string_view kSupplyCacheControl = "public, max-age=5";

}  // namespace connector::api
