#include "api/router.h"

#include <algorithm>

#include "db/database.h"
#include "http/api_error.h"
#include "http/etag.h"
#include "http/query_string.h"
#include "http/request_id.h"
#include "util/log.h"

namespace connector::api {
namespace {

constexpr std::string_view kContentType = "application/json; charset=utf-8";
constexpr std::string_view kNoStore = "no-store";

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
    case 414:
      return "URI Too Long";
    case 503:
      return "Service Unavailable";
    default:
      return "Internal Server Error";
  }
}

const Route* find_route(std::string_view path) {
  for (const auto& route : kRoutes) {
    if (route.path == path) return &route;
  }
  return nullptr;
}

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

void add_header(std::string& head, std::string_view name, std::string_view value) {
  head.append(name).append(": ").append(value).append("\r\n");
}

}  // namespace

int Router::dispatch(const Route* route, const HttpRequest& request, const std::string& request_id,
                     std::string& cache_control, std::string& extra_headers) {
  try {
    if (route == nullptr) {
      // The path is echoed only when it is short, printable text.
      const bool echo = request.path.size() <= 256 && http::is_valid_utf8(request.path) &&
                        std::none_of(request.path.begin(), request.path.end(), [](char c) {
                          return static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
                        });
      throw http::ApiError(404, "not_found",
                           echo ? "No such endpoint: " + std::string(request.path)
                                : std::string("No such endpoint"));
    }
    if (request.method != "GET" && request.method != "HEAD") {
      extra_headers = "Allow: GET, HEAD\r\n";
      throw http::ApiError(405, "method_not_allowed",
                           "Only GET and HEAD are allowed on " + std::string(request.path));
    }
    const auto params = http::QueryParams::parse(request.query_string);
    params.reject_duplicates(route->params);
    body_.Clear();
    json::JsonWriter writer(body_);
    cache_control = route->endpoint(params, services_, writer);
    return 200;
  } catch (const http::ApiError& e) {
    write_error_body(body_, e, request_id);
    return e.status();
  } catch (const db::DatabaseUnavailable& e) {
    util::log_warning("request " + request_id + ": " + e.what());
    extra_headers = "Retry-After: 1\r\n";
    write_error_body(
        body_,
        http::ApiError(503, "unavailable", "The service cannot reach its database; retry shortly"),
        request_id);
    return 503;
  } catch (const std::exception& e) {
    util::log_error("request " + request_id + ": " + e.what());
    write_error_body(body_, http::ApiError(500, "internal", "Internal error"), request_id);
    return 500;
  }
}

HttpResponse Router::handle(const HttpRequest& request) {
  HttpResponse response;
  response.request_id = http::is_valid_request_id(request.request_id)
                            ? std::string(request.request_id)
                            : http::make_request_id();
  std::string cache_control(kNoStore);
  std::string extra_headers;
  response.status = dispatch(find_route(request.path), request, response.request_id, cache_control,
                             extra_headers);
  const std::string_view body(body_.GetString(), body_.GetSize());

  std::string etag;
  if (response.status == 200) {
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
  add_header(head, "Content-Type", kContentType);
  add_header(head, "X-Request-Id", response.request_id);
  add_header(head, "Cache-Control", cache_control);
  if (!etag.empty()) add_header(head, "ETag", etag);
  head.append(extra_headers);
  const bool send_body = response.status != 304 && request.method != "HEAD";
  if (response.status != 304) add_header(head, "Content-Length", std::to_string(body.size()));
  head.append("\r\n");
  if (send_body) response.body = body;
  return response;
}

}  // namespace connector::api
