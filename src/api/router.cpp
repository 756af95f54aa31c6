#include "api/router.h"

#include <algorithm>
#include <stdexcept>

#include "api/params.h"
#include "db/connection.h"
#include "db/new_row_budget.h"
#include "http/api_error.h"
#include "http/etag.h"
#include "http/query_string.h"
#include "http/request_id.h"
#include "metrics/scoreboard.h"
#include "util/log.h"

namespace connector::api {
namespace {

constexpr std::string_view kContentType = "application/json; charset=utf-8";
constexpr std::string_view kNoStore = "no-store";
constexpr std::string_view kEventStreamContentType = "text/event-stream; charset=utf-8";

std::string_view reason_phrase(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 304:
      return "Not Modified";
    case 400:
      return "Bad Request";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 406:
      return "Not Acceptable";
    case 414:
      return "URI Too Long";
    case 503:
      return "Service Unavailable";
    default:
      return "Internal Server Error";
  }
}

template <typename Table>
auto find_in(const Table& table, std::string_view path) -> decltype(&table[0]) {
  for (const auto& route : table) {
    if (route.path == path) return &route;
  }
  return nullptr;
}

// The path is never repeated: an error copies nothing the client wrote but a parameter name
// the endpoint knows.
[[noreturn]] void throw_not_found() { throw http::ApiError(404, "not_found", "No such endpoint"); }

void write_error_body(rapidjson::StringBuffer& buffer, const http::ApiError& error,
                      const std::string& request_id) {
  buffer.Clear();
  json::JsonWriter w(buffer);
  w.StartObject();
  json::key(w, "error");
  w.StartObject();
  json::member(w, "code", error.code());
  json::member(w, "message", error.what());
  if (!error.param().empty()) json::member(w, "param", error.param());
  json::member(w, "request_id", request_id);
  w.EndObject();
  w.EndObject();
}

// Whether an endpoint whose 200s are `body` may give `answer`.
bool describes(EndpointSpec::Body body, Answer::Kind answer) {
  switch (body) {
    case EndpointSpec::Body::kJson:
      return answer == Answer::kUsual || answer == Answer::kFinal ||
             answer == Answer::kNotFrontCached;
    case EndpointSpec::Body::kEventStream:
      return answer == Answer::kEventStream || answer == Answer::kMissedEvents;
    case EndpointSpec::Body::kLongPoll:
      return answer == Answer::kUsual || answer == Answer::kEventStream;
  }
  return false;
}

void add_header(std::string& head, std::string_view name, std::string_view value) {
  head.append(name).append(": ").append(value).append("\r\n");
}

// nchan reads a message id from these two headers whatever its configuration says (from their
// presence: an empty one too), and nchan 1.3.6 aborts an nginx worker on some (docs/events.md):
// an event stream or a long-poll that carries either never reaches it. Clients follow with
// Last-Event-ID or `after` instead.
void reject_conditional_headers(const HttpRequest& request) {
  for (const auto& [name, value] : {std::pair{"If-None-Match", request.if_none_match},
                                    std::pair{"If-Modified-Since", request.if_modified_since}}) {
    if (value.data() != nullptr) {  // present (an absent header is a null view)
      throw http::invalid_parameter(name, std::string("This path takes no ") + name +
                                              ": follow it with Last-Event-ID or after");
    }
  }
}

}  // namespace

std::span<const std::string_view, kEndpointSlotsUsed> endpoint_labels() {
  static const auto labels = [] {
    std::array<std::string_view, kEndpointSlotsUsed> all{};
    for (std::size_t i = 0; i < std::size(kEndpoints); ++i) all[i] = kEndpoints[i]->path;
    all[kOpsEndpoint] = "ops";
    all[kUnknownEndpoint] = "unknown";
    return all;
  }();
  return labels;
}

struct Router::Outcome {
  int status = 200;
  std::size_t endpoint_index = kUnknownEndpoint;
  std::string cache_control{kNoStore};
  std::string_view content_type = kContentType;
  std::string extra_headers;
  bool validators = false;  // ETag and If-None-Match apply
  bool sized = true;        // Content-Length applies (not to the head of a stream)
};

void Router::run_api(const EndpointSpec& endpoint, const HttpRequest& request, Outcome& outcome) {
  if (endpoint.body != EndpointSpec::Body::kJson) reject_conditional_headers(request);
  const auto query = http::QueryParams::parse(request.query_string, endpoint.names);
  query.reject_duplicates(endpoint.names);
  const auto params = ValidParams::check(endpoint.params, query, services_.reference);
  json::JsonWriter writer(body_);
  // The request's own values, on the stack: nothing of the request outlives the call.
  const RequestContext context{.params = params,
                               .deadline = request.deadline,
                               .last_event_id = request.last_event_id,
                               .accept = request.accept,
                               .upgrade = request.upgrade,
                               .head = request.method == "HEAD"};
  const Answer answer = endpoint.handler(context, services_, writer);
  if (!describes(endpoint.body, answer.kind)) {
    throw std::logic_error(std::string(endpoint.path) + ": an answer its description has not");
  }
  if (answer.kind == Answer::kEventStream) {
    // nginx keeps both across the hand-over: the events nginx's raw stream sends no type.
    outcome.cache_control = endpoint.cache.cache_control;
    if (endpoint.body == EndpointSpec::Body::kEventStream) {
      outcome.content_type = kEventStreamContentType;
    }
    if (context.head) {
      // nchan answers no HEAD (the client would wait for the connection to close): the head
      // of what the GET is handed to, here, with no length (a stream has none).
      outcome.sized = false;
      return;
    }
    outcome.extra_headers = answer.redirect_header();
    return;
  }
  if (answer.kind == Answer::kMissedEvents) {
    body_.Clear();
    const auto& events = answer.events;  // freed with the answer: up to a hundred records
    std::copy(events.begin(), events.end(), body_.Push(events.size()));
    outcome.content_type = kEventStreamContentType;
    outcome.cache_control = endpoint.cache.cache_control;
    return;
  }
  // The description's policy, never the handler's own: an answer cannot differ from it.
  outcome.cache_control = answer.kind == Answer::kFinal ? endpoint.cache.final_cache_control
                                                        : endpoint.cache.cache_control;
  if (outcome.cache_control.empty()) {
    throw std::logic_error(std::string(endpoint.path) + ": a final answer, but no final policy");
  }
  if (answer.kind == Answer::kNotFrontCached) outcome.extra_headers = "X-Accel-Expires: 0\r\n";
  // A long-poll's answer is for one moment: no validators to come back with.
  outcome.validators = endpoint.body == EndpointSpec::Body::kJson;
}

void Router::run_ops(const OpsRoute& route, Outcome& outcome) {
  outcome.content_type = route.endpoint(services_, body_);
}

Router::Outcome Router::dispatch(const HttpRequest& request, const std::string& request_id) {
  Outcome outcome;
  const auto* found = std::find_if(std::begin(kEndpoints), std::end(kEndpoints),
                                   [&](const EndpointSpec* e) { return e->path == request.path; });
  const EndpointSpec* api = found == std::end(kEndpoints) ? nullptr : *found;
  const OpsRoute* ops = api ? nullptr : find_in(kOpsRoutes, request.path);
  if (api) outcome.endpoint_index = static_cast<std::size_t>(found - std::begin(kEndpoints));
  if (ops) outcome.endpoint_index = kOpsEndpoint;
  body_.Clear();
  try {
    if (!api && !ops) throw_not_found();
    if (request.method != "GET" && request.method != "HEAD") {
      // /v1 paths also take OPTIONS, the CORS preflight nginx answers itself (an OPTIONS
      // that reaches the worker, with no nginx in front, is this 405).
      outcome.extra_headers = api ? "Allow: GET, HEAD, OPTIONS\r\n" : "Allow: GET, HEAD\r\n";
      throw http::ApiError(405, "method_not_allowed", "This method is not allowed here");
    }
    if (api) {
      run_api(*api, request, outcome);
    } else {
      run_ops(*ops, outcome);
    }
    return outcome;
  } catch (const http::ApiError& e) {
    write_error_body(body_, e, request_id);
    outcome.status = e.status();
  } catch (const db::NewRowCapReached& e) {
    write_error_body(body_,
                     http::ApiError(503, "unavailable",
                                    "Too many new deposit addresses were asked for in the last "
                                    "minute; retry after the time in Retry-After"),
                     request_id);
    outcome.status = 503;
    outcome.extra_headers = "Retry-After: " + std::to_string(e.retry_after_s()) + "\r\n";
  } catch (const db::DatabaseUnavailable& e) {
    util::log_warning("request " + request_id + ": " + e.what());
    write_error_body(
        body_,
        http::ApiError(503, "unavailable", "The service cannot reach its database; retry shortly"),
        request_id);
    outcome.status = 503;
    outcome.extra_headers = "Retry-After: 1\r\n";
  } catch (const std::exception& e) {
    util::log_error("request " + request_id + ": " + e.what());
    write_error_body(body_, http::ApiError(500, "internal", "Internal error"), request_id);
    outcome.status = 500;
  }
  // Errors: one body shape, never cached, whatever the endpoint had started to write.
  outcome.cache_control = kNoStore;
  outcome.content_type = kContentType;
  outcome.validators = false;
  outcome.sized = true;
  return outcome;
}

HttpResponse Router::handle(const HttpRequest& request) {
  HttpResponse response;
  response.request_id = http::is_valid_request_id(request.request_id)
                            ? std::string(request.request_id)
                            : http::make_request_id();
  const Outcome outcome = dispatch(request, response.request_id);
  response.status = outcome.status;
  response.endpoint_index = outcome.endpoint_index;
  const std::string_view body(body_.GetString(), body_.GetSize());

  std::string etag;
  if (outcome.validators) {
    etag = http::strong_etag(body);
    if (!request.if_none_match.empty() &&
        http::if_none_match_matches(request.if_none_match, etag)) {
      response.status = 304;
    }
  }

  auto& head = response.head;
  head.reserve(256);
  head.append("Status: ")
      .append(std::to_string(response.status))
      .append(" ")
      .append(reason_phrase(response.status))
      .append("\r\n");
  add_header(head, "Content-Type", outcome.content_type);
  add_header(head, "X-Request-Id", response.request_id);
  add_header(head, "Cache-Control", outcome.cache_control);
  if (!etag.empty()) add_header(head, "ETag", etag);
  head.append(outcome.extra_headers);
  const bool send_body = response.status != 304 && request.method != "HEAD";
  if (response.status != 304 && outcome.sized) {
    add_header(head, "Content-Length", std::to_string(body.size()));
  }
  head.append("\r\n");
  if (send_body) response.body = body;
  return response;
}

}  // namespace connector::api
