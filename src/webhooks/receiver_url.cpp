#include "webhooks/receiver_url.h"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <memory>

namespace connector::webhooks {
namespace {

constexpr std::size_t kMaxUrlBytes = 2048;

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

std::string unbracketed(std::string host) {
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    return host.substr(1, host.size() - 2);
  }
  return host;
}

}  // namespace

std::variant<ReceiverUrl, UrlRefused> parse_receiver_url(
    std::string_view text, const std::vector<std::string>& http_hosts) {
  if (text.empty() || text.size() > kMaxUrlBytes) {
    return UrlRefused{"a URL of 1 to 2048 bytes is required"};
  }
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
  parsed.host = lower(unbracketed(part(url.get(), CURLUPART_HOST)));
  if (!part(url.get(), CURLUPART_USER).empty() || !part(url.get(), CURLUPART_PASSWORD).empty()) {
    return UrlRefused{"a user name or password in the URL"};
  }
  if (!part(url.get(), CURLUPART_FRAGMENT).empty()) return UrlRefused{"a fragment in the URL"};
  if (parsed.scheme != "https" && parsed.scheme != "http") {
    return UrlRefused{"only https (or http to an allow-listed host)"};
  }
  if (parsed.host.empty()) return UrlRefused{"no host"};
  if (parsed.scheme == "http" && !listed(parsed.host, http_hosts)) {
    return UrlRefused{"http to a host not in webhooks_allow_hosts; use https"};
  }
  // The host in lower case in the URL kept too (libcurl keeps it as written).
  const std::string host_part = part(url.get(), CURLUPART_HOST);
  curl_url_set(url.get(), CURLUPART_HOST, lower(host_part).c_str(), 0);
  const std::string port = part(url.get(), CURLUPART_PORT, CURLU_DEFAULT_PORT);
  if (port.empty() || port.size() > 5) return UrlRefused{"no port"};
  parsed.port = static_cast<std::uint16_t>(std::stoul(port));  // digits, at most 65535 (libcurl)
  parsed.url = part(url.get(), CURLUPART_URL);
  return parsed;
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
