#pragma once
// The API surface in one table of endpoint descriptions, and everything every request shares:
// unknown path (404), method (405), query length (414), errors as one JSON shape, ETag/304, HEAD,
// X-Request-Id. Knows HTTP as CGI variables, not FastCGI: the worker in fcgi/ feeds it.
#include <rapidjson/stringbuffer.h>

#include <array>
#include <chrono>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "api/endpoints.h"
#include "api/ops.h"
#include "metrics/scoreboard.h"

namespace connector::api {

struct HttpRequest {
  std::string_view method;
  std::string_view path;  // decoded, normalised path (nginx's $document_uri)
  std::string_view query_string;
  std::string_view if_none_match;  // null data() when absent (as every header below)
  std::string_view request_id;     // from nginx; one is made when missing or malformed
  // The end of the request's time budget: what waits on the database or on a reload stops
  // there.
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
  // The Last-Event-ID header of a reconnecting EventSource ("" when absent).
  std::string_view last_event_id = {};
  std::string_view if_modified_since = {};
  // Read by the event streams only (api/event_stream.h: what nchan would refuse).
  std::string_view accept = {};
  std::string_view upgrade = {};
};

struct HttpResponse {
  int status = 200;
  std::size_t endpoint_index = 0;  // the metrics label: index in kEndpoints, then ops, unknown
  std::string request_id;
  std::string head;       // CGI header lines ("Status: 200 OK\r\n" ...) and the blank line
  std::string_view body;  // empty for HEAD and 304; valid until the next handle()
};

// The endpoints, by their descriptions (each in its own file, listed once in endpoints.h): a
// request's path finds one, and its metrics label is its index here.
#define CONNECTOR_API_ENDPOINT_ADDRESS(name) &(name),
inline const EndpointSpec* const kEndpoints[] = {
    CONNECTOR_API_ENDPOINTS(CONNECTOR_API_ENDPOINT_ADDRESS)};
#undef CONNECTOR_API_ENDPOINT_ADDRESS

// The metrics' label of each endpoint slot in use: the endpoints' paths, in kEndpoints' order
// (a response's endpoint_index), then the operations paths and anything unknown.
inline constexpr std::size_t kOpsEndpoint = std::size(kEndpoints);
inline constexpr std::size_t kUnknownEndpoint = kOpsEndpoint + 1;
inline constexpr std::size_t kEndpointSlotsUsed = kUnknownEndpoint + 1;
static_assert(kEndpointSlotsUsed <= metrics::kEndpointSlots,
              "more endpoints than the scoreboard has room for: raise metrics::kEndpointSlots");
std::span<const std::string_view, kEndpointSlotsUsed> endpoint_labels();

// One per worker thread: it reuses its body buffer from request to request.
class Router {
 public:
  explicit Router(Services services) : services_(services) {}

  HttpResponse handle(const HttpRequest& request);

 private:
  struct Outcome;
  // Runs the endpoint or operations page, or turns what it threw into an error body.
  Outcome dispatch(const HttpRequest& request, const std::string& request_id);
  void run_api(const EndpointSpec& endpoint, const HttpRequest& request, Outcome& outcome);
  void run_ops(const OpsRoute& route, Outcome& outcome);

  const Services services_;  // long-lived: a request's values travel in a RequestContext
  rapidjson::StringBuffer body_;
};

}  // namespace connector::api
