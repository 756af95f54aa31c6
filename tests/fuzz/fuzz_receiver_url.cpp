// Fuzzes src/webhooks/receiver_url.h: parse_receiver_url, the check of the URL an operator gives
// `connector-admin webhook add --url`. The input's first line is the URL and each further line
// an allow-listed http host; the whole input is also tried as one URL with the same list.
// Invariants of an accepted URL: every byte of the text was judged (no NUL, which would end
// libcurl's C string early); scheme https, or http to a host of the list (compared in lower
// case); no user name, password or fragment, not even an empty one; the host a resolver takes
// (letters, digits, '-', '_' and '.', or an IPv6 address), in lower case, and spelt so in the
// URL, which is scheme "://" host [":" port] and then its path; the port in 1..65535 (the
// scheme's own when the URL names none); at most 2048 bytes as libcurl writes it (the database
// column); and the URL parses again to exactly the same result.
#include <algorithm>
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "fuzz_check.h"
#include "webhooks/receiver_url.h"

namespace {

using connector::webhooks::parse_receiver_url;
using connector::webhooks::ReceiverUrl;
using connector::webhooks::UrlRefused;

constexpr std::size_t kMaxUrlBytes = 2048;

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool listed(const std::string& host, const std::vector<std::string>& hosts) {
  return std::any_of(hosts.begin(), hosts.end(),
                     [&](const std::string& h) { return lower(h) == host; });
}

// "host", or "[host]" for an IPv6 literal, as the URL writes it.
std::string url_host(const std::string& host) {
  return host.find(':') == std::string::npos ? host : "[" + host + "]";
}

void check_accepted(std::string_view text, const ReceiverUrl& url,
                    const std::vector<std::string>& hosts) {
  FUZZ_CHECK(text.find('\0') == std::string_view::npos);
  FUZZ_CHECK(url.scheme == "https" || url.scheme == "http");
  if (url.scheme == "http") FUZZ_CHECK(listed(url.host, hosts));
  FUZZ_CHECK(!url.host.empty() && url.host == lower(url.host));
  const bool ipv6 = url.host.find(':') != std::string::npos;
  FUZZ_CHECK(url.host.find_first_not_of(ipv6 ? "0123456789abcdef:."
                                             : "abcdefghijklmnopqrstuvwxyz0123456789-_.") ==
             std::string::npos);
  FUZZ_CHECK(url.port >= 1);  // at most 65535: the type's range
  FUZZ_CHECK(url.url.size() <= kMaxUrlBytes);
  FUZZ_CHECK(url.url.find('#') == std::string::npos);
  // scheme "://" authority, then the path (libcurl writes at least "/").
  const std::string start = url.scheme + "://";
  FUZZ_CHECK(url.url.starts_with(start));
  const std::size_t path = url.url.find('/', start.size());
  FUZZ_CHECK(path != std::string::npos);
  const std::string_view authority =
      std::string_view(url.url).substr(start.size(), path - start.size());
  FUZZ_CHECK(authority.find('@') == std::string_view::npos);
  const std::string host = url_host(url.host);
  const std::uint16_t default_port = url.scheme == "https" ? 443 : 80;
  FUZZ_CHECK(authority == host ? url.port == default_port
                               : authority == host + ":" + std::to_string(url.port));
  // Idempotent: the accepted URL is accepted again as the same thing.
  const auto again = parse_receiver_url(url.url, hosts);
  const auto* second = std::get_if<ReceiverUrl>(&again);
  FUZZ_CHECK(second != nullptr);
  FUZZ_CHECK(second->url == url.url && second->scheme == url.scheme && second->host == url.host &&
             second->port == url.port);
}

void check(std::string_view text, const std::vector<std::string>& hosts) {
  const auto result = parse_receiver_url(text, hosts);
  if (const auto* url = std::get_if<ReceiverUrl>(&result)) {
    check_accepted(text, *url, hosts);
  } else {
    FUZZ_CHECK(!std::get<UrlRefused>(result).reason.empty());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::size_t end = std::min(input.find('\n'), input.size());
  std::vector<std::string> hosts;
  for (std::size_t at = end; at < input.size();) {
    const std::size_t next = std::min(input.find('\n', at + 1), input.size());
    hosts.emplace_back(input.substr(at + 1, next - at - 1));
    at = next;
  }
  check(input.substr(0, end), hosts);
  check(input, hosts);
  return 0;
}
