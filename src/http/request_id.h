#pragma once
// The id that ties a response, its error body and its log line together.
#include <string>
#include <string_view>

namespace connector::http {

// nginx's $request_id is 32 hex digits; accept any short token of letters, digits and '-'.
bool is_valid_request_id(std::string_view id);

// 32 random hex digits, for requests that arrive without one.
std::string make_request_id();

}  // namespace connector::http
