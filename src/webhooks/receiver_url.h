#pragma once
// A subscription's receiver URL, as `connector-admin webhook add --url` takes it: parsed by
// libcurl's URL API (the parser the deliverer's requests go through), then held to the rules of
// docs/webhooks.md: https, or http only to a host the operator allow-lists (tests, private
// networks); printable ASCII only; no user name or password in it (not even empty ones); no
// fragment; a host a resolver takes (a name of letters, digits, '-', '_' and '.', or an IP address;
// no IPv6 zone); a port of 1 to 65535; no NUL byte; as libcurl writes it, at most 2048 bytes and
// read back the same. Where it may connect is decided later, address by address, once the host is
// resolved (address_policy.h). tests/fuzz/fuzz_receiver_url.cpp holds it to these rules.
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace connector::webhooks {

struct ReceiverUrl {
  std::string url;     // as libcurl normalises it (scheme and host in lower case)
  std::string scheme;  // "https" or "http"
  std::string host;    // a name or an address literal (an IPv6 one without its brackets)
  std::uint16_t port = 0;
};

struct UrlRefused {
  std::string reason;
};

// `http_hosts`: the hosts (as written in the URL, case-insensitive) http is allowed to.
std::variant<ReceiverUrl, UrlRefused> parse_receiver_url(
    std::string_view text, const std::vector<std::string>& http_hosts);

// The config's webhooks_allow_hosts ("a.test, 127.0.0.1") as the list above: split at commas,
// spaces and tabs around each host dropped, empty items left out.
std::vector<std::string> allowed_hosts(std::string_view comma_separated);

}  // namespace connector::webhooks
