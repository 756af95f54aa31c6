#pragma once
// The API surface in one table, and everything every request shares: unknown path (404),
// method (405), query length (414), errors as one JSON shape, ETag/304, HEAD, X-Request-Id.
// Knows HTTP as CGI variables, not FastCGI: the worker in fcgi/ feeds it.
#include <rapidjson/stringbuffer.h>

#include <array>
#include <chrono>
#include <span>
#include <string>
#include <string_view>

#include "api/endpoints.h"
#include "api/ops.h"
#include "metrics/scoreboard.h"

namespace connector::api {

struct HttpRequest {
  std::string_view method;
  std::string_view path;  // decoded, normalised path (nginx's $document_uri)
  std::string_view query_string;
  std::string_view if_none_match;
  std::string_view request_id;  // from nginx; one is made when missing or malformed
  // The end of the request's time budget: what waits on the database or on a reload stops
  // there.
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
};

struct HttpResponse {
  int status = 200;
  std::size_t endpoint_index = 0;  // the metrics label: index in kRoutes, then ops, unknown
  std::string request_id;
  std::string head;       // CGI header lines ("Status: 200 OK\r\n" ...) and the blank line
  std::string_view body;  // empty for HEAD and 304; valid until the next handle()
};

// The endpoints by path, with the parameters each one knows (others are ignored).
struct Route {
  std::string_view path;
  Endpoint endpoint;
  std::span<const std::string_view> params;
};
inline constexpr std::string_view kAccountParams[] = {"recipient_address", "recipient_blockchain",
                                                      "deposit_blockchain"};
inline constexpr std::string_view kHistoryParams[] = {"page_id",
                                                      "page_size",
                                                      "source_deposit_address",
                                                      "source_sender",
                                                      "source_blockchain",
                                                      "source_asset_id",
                                                      "source_tx_hash",
                                                      "destination_address",
                                                      "destination_blockchain",
                                                      "destination_asset_id",
                                                      "destination_tx_hash",
                                                      "pair_id",
                                                      "status",
                                                      "order"};
inline constexpr std::string_view kHistoryHashParams[] = {"hash"};
inline constexpr Route kRoutes[] = {
    {"/v1/networks", networks, {}},
    {"/v1/connects", connects, {}},
    {"/v1/pairs", pairs, {}},
    {"/v1/account", account, kAccountParams},
    {"/v1/history", history, kHistoryParams},
    {"/v1/history/hash", history_by_hash, kHistoryHashParams},
    {"/v1/ab", chain_supply, {}},
};

// The metrics' label of each endpoint slot: the routes' paths, in kRoutes' order (a response's
// endpoint_index), then the operations paths and anything unknown.
inline constexpr std::size_t kOpsEndpoint = std::size(kRoutes);
inline constexpr std::size_t kUnknownEndpoint = kOpsEndpoint + 1;
inline constexpr auto kEndpointLabels = [] {
  std::array<std::string_view, std::size(kRoutes) + 2> labels{};
  for (std::size_t i = 0; i < std::size(kRoutes); ++i) labels[i] = kRoutes[i].path;
  labels[kOpsEndpoint] = "ops";
  labels[kUnknownEndpoint] = "unknown";
  return labels;
}();
static_assert(kEndpointLabels.size() == metrics::kEndpointSlots,
              "metrics::kEndpointSlots must be the number of routes + 2");

// One per worker thread: it reuses its body buffer from request to request.
class Router {
 public:
  explicit Router(Services services) : services_(services) {}

  HttpResponse handle(const HttpRequest& request);

 private:
  struct Outcome;
  // Runs the endpoint or operations page, or turns what it threw into an error body.
  Outcome dispatch(const HttpRequest& request, const std::string& request_id);
  void run_api(const Route& route, const HttpRequest& request, Outcome& outcome);
  void run_ops(const OpsRoute& route, Outcome& outcome);

  Services services_;
  rapidjson::StringBuffer body_;
};

}  // namespace connector::api
