#include "webhooks/receiver_url.h"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <memory>
#include <optional>
#include <utility>

namespace connector::webhooks {
namespace {

constexpr std::size_t kMaxUrlBytes = 2048;  // webhook_subscriptions.url, VARCHAR(2048)
constexpr const char* kLengthRule = "a URL of 1 to 2048 bytes is required";

struct UrlDeleter {
  void operator()(CURLU* url) const { curl_url_cleanup(url); }
};
using UrlHandle = std::unique_ptr<CURLU, UrlDeleter>;

// One part of the parsed URL; empty when it has none.
std::string part(CURLU* url, CURLUPart which, unsigned flags = 0) {
  char* text = nullptr;
  if (curl_url_get(url, which, &text, flags) != CURLUE_OK || text == nullptr) return {};
  std::string value(text);
  curl_free(text);
  return value;
}

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

bool listed(const std::string& host, const std::vector<std::string>& hosts) {
  return std::any_of(hosts.begin(), hosts.end(),
                     [&](const std::string& h) { return lower(h) == host; });
}

bool bracketed(const std::string& host) {
  return host.size() >= 2 && host.front() == '[' && host.back() == ']';
}

std::string unbracketed(const std::string& host) {
  return bracketed(host) ? host.substr(1, host.size() - 2) : host;
}

// Whether the URL has the part at all, empty or not ("https://@host/" has an empty user name).
bool has_part(CURLU* url, CURLUPart which) {
  char* text = nullptr;
  const CURLUcode code = curl_url_get(url, which, &text, 0);
  curl_free(text);
  return code == CURLUE_OK;
}

// The host (in lower case) as a resolver takes it: a name of letters, digits, '-', '_' and '.'
// (an IDN in its xn-- form), an IPv4 address, or an IPv6 one between brackets. libcurl also
// takes percent-escapes (decoded) and any byte above 0x7f in a name, which it writes back into
// the URL escaped or raw: not the host the deliverer would resolve.
bool plain_host(const std::string& host, bool ipv6) {
  const std::string_view allowed =
      ipv6 ? "0123456789abcdef:." : "abcdefghijklmnopqrstuvwxyz0123456789-_.";
  return host.find_first_not_of(allowed) == std::string::npos;
}

// Why the parsed URL is refused, or nothing when it is taken.
std::optional<std::string> refusal(CURLU* url, const ReceiverUrl& parsed, bool ipv6,
                                   const std::vector<std::string>& http_hosts) {
  if (has_part(url, CURLUPART_USER) || has_part(url, CURLUPART_PASSWORD)) {
    return "a user name or password in the URL";
  }
  if (has_part(url, CURLUPART_FRAGMENT)) return "a fragment in the URL";
  if (parsed.scheme != "https" && parsed.scheme != "http") {
    return "only https (or http to an allow-listed host)";
  }
  if (parsed.host.empty()) return "no host";
  if (!plain_host(parsed.host, ipv6) || has_part(url, CURLUPART_ZONEID)) {
    return "a host name of letters, digits, '-', '_' and '.', or an IP address";
  }
  if (parsed.scheme == "http" && !listed(parsed.host, http_hosts)) {
    return "http to a host not in webhooks_allow_hosts; use https";
  }
  return std::nullopt;
}

// One reading of the URL by libcurl, held to the rules.
std::variant<ReceiverUrl, UrlRefused> parse_once(std::string_view text,
                                                 const std::vector<std::string>& http_hosts) {
  if (text.empty() || text.size() > kMaxUrlBytes) return UrlRefused{kLengthRule};
  // libcurl reads a C string: what follows a NUL would never be judged.
  if (text.find('\0') != std::string_view::npos) return UrlRefused{"a NUL byte in the URL"};
  // Stored (webhook_subscriptions.url is ascii) and sent as it is: a path percent-encoded, an
  // international host in its xn-- form.
  if (std::any_of(text.begin(), text.end(), [](char c) { return c <= ' ' || c > '~'; })) {
    return UrlRefused{"only printable ASCII (percent-encode the rest; a host in its xn-- form)"};
  }
  const UrlHandle url(curl_url());
  if (!url) return UrlRefused{"out of memory"};
  const std::string input(text);
  if (const CURLUcode error = curl_url_set(url.get(), CURLUPART_URL, input.c_str(), 0);
      error != CURLUE_OK) {
    return UrlRefused{std::string("not a URL: ") + curl_url_strerror(error)};
  }
  ReceiverUrl parsed;
  parsed.scheme = lower(part(url.get(), CURLUPART_SCHEME));
  const std::string host_part = lower(part(url.get(), CURLUPART_HOST));
  parsed.host = unbracketed(host_part);
  if (auto reason = refusal(url.get(), parsed, bracketed(host_part), http_hosts)) {
    return UrlRefused{std::move(*reason)};
  }
  // The host in lower case in the URL kept too (libcurl keeps it as written).
  curl_url_set(url.get(), CURLUPART_HOST, host_part.c_str(), 0);
  const std::string port = part(url.get(), CURLUPART_PORT, CURLU_DEFAULT_PORT);
  if (port.empty() || port.size() > 5) return UrlRefused{"no port"};
  parsed.port = static_cast<std::uint16_t>(std::stoul(port));  // digits, at most 65535 (libcurl)
  if (parsed.port == 0) return UrlRefused{"a port of 1 to 65535 is required"};
  // As libcurl writes it the URL can be longer than as given ("https://h?q" gains a "/",
  // "https://1/" is "https://0.0.0.1/"); the database column holds 2048 bytes.
  parsed.url = part(url.get(), CURLUPART_URL);
  if (parsed.url.size() > kMaxUrlBytes) return UrlRefused{kLengthRule};
  return parsed;
}

}  // namespace

std::variant<ReceiverUrl, UrlRefused> parse_receiver_url(
    std::string_view text, const std::vector<std::string>& http_hosts) {
  auto result = parse_once(text, http_hosts);
  const auto* url = std::get_if<ReceiverUrl>(&result);
  if (url == nullptr) return result;
  // The URL as written must read back the same: libcurl decodes a host's percent-escapes after
  // it has looked for an IPv4 address in it, so "0x%399" is the name "0x99", which written in
  // the URL (and resolved) is the address 0.0.0.153.
  const auto again = parse_once(url->url, http_hosts);
  const auto* second = std::get_if<ReceiverUrl>(&again);
  if (second == nullptr || second->url != url->url || second->host != url->host ||
      second->port != url->port) {
    return UrlRefused{"a URL libcurl reads otherwise once written (an escape in the host)"};
  }
  return result;
}

std::vector<std::string> allowed_hosts(std::string_view comma_separated) {
  std::vector<std::string> hosts;
  while (true) {
    const std::size_t comma = std::min(comma_separated.find(','), comma_separated.size());
    std::string_view host = comma_separated.substr(0, comma);
    while (!host.empty() && (host.front() == ' ' || host.front() == '\t')) host.remove_prefix(1);
    while (!host.empty() && (host.back() == ' ' || host.back() == '\t')) host.remove_suffix(1);
    if (!host.empty()) hosts.emplace_back(host);
    if (comma == comma_separated.size()) return hosts;
    comma_separated.remove_prefix(comma + 1);
  }
}

}  // namespace connector::webhooks
