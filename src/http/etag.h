#pragma once
// Strong validators: an ETag from the body's bytes, and If-None-Match matching.
#include <string>
#include <string_view>

namespace connector::http {

// "\"" + the 32 hex digits of the body's XXH3-128 + "\"": equal bodies, equal tags, on every
// worker of one version.
std::string strong_etag(std::string_view body);

// If-None-Match uses the weak comparison (RFC 9110 13.1.2): "*" or any listed tag equal to etag
// once a W/ prefix is dropped.
bool if_none_match_matches(std::string_view header, std::string_view etag);

}  // namespace connector::http
