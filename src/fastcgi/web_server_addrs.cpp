#include "fastcgi/web_server_addrs.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "util/text.h"

namespace connector::fastcgi {
namespace {

bool same(const in_addr& a, const in_addr& b) { return a.s_addr == b.s_addr; }
bool same(const in6_addr& a, const in6_addr& b) { return std::memcmp(&a, &b, sizeof a) == 0; }

std::string text_of(int family, const void* address) {
  char buffer[INET6_ADDRSTRLEN] = {};
  if (::inet_ntop(family, address, buffer, sizeof buffer) == nullptr) return "?";
  return buffer;
}

}  // namespace

WebServerAddrs WebServerAddrs::parse(std::string_view list) {
  WebServerAddrs addrs;
  while (!list.empty()) {
    const auto comma = list.find(',');
    const std::string entry(util::trim(list.substr(0, comma)));
    list = comma == std::string_view::npos ? std::string_view{} : list.substr(comma + 1);
    if (entry.empty()) continue;
    in_addr v4{};
    in6_addr v6{};
    // inet_pton takes the dotted quad only (not inet_addr's "127.1" or hex forms).
    if (::inet_pton(AF_INET, entry.c_str(), &v4) == 1) {
      addrs.v4_.push_back(v4);
    } else if (::inet_pton(AF_INET6, entry.c_str(), &v6) == 1) {
      addrs.v6_.push_back(v6);
    } else {
      throw std::invalid_argument(std::string(kVariable) + ": '" + entry +
                                  "' is not an IP address (list the web servers' IPv4 or IPv6 "
                                  "addresses, comma-separated; no names, no networks)");
    }
  }
  return addrs;
}

WebServerAddrs WebServerAddrs::from_environment() {
  const char* value = std::getenv(kVariable);
  return value == nullptr ? WebServerAddrs{} : parse(value);
}

bool WebServerAddrs::allows(const sockaddr* peer, socklen_t length) const {
  if (!restricts() || peer == nullptr) return !restricts();
  const auto listed4 = [this](const in_addr& a) {
    return std::any_of(v4_.begin(), v4_.end(), [&a](const in_addr& b) { return same(a, b); });
  };
  switch (peer->sa_family) {
    case AF_UNIX:
      return true;
    case AF_INET: {
      if (length < static_cast<socklen_t>(sizeof(sockaddr_in))) return false;
      sockaddr_in in{};
      std::memcpy(&in, peer, sizeof in);
      return listed4(in.sin_addr);
    }
    case AF_INET6: {
      if (length < static_cast<socklen_t>(sizeof(sockaddr_in6))) return false;
      sockaddr_in6 in6{};
      std::memcpy(&in6, peer, sizeof in6);
      if (IN6_IS_ADDR_V4MAPPED(&in6.sin6_addr)) {
        in_addr v4{};
        std::memcpy(&v4, &in6.sin6_addr.s6_addr[12], sizeof v4);
        return listed4(v4);
      }
      return std::any_of(v6_.begin(), v6_.end(),
                         [&in6](const in6_addr& b) { return same(in6.sin6_addr, b); });
    }
    default:
      return false;
  }
}

std::string WebServerAddrs::describe() const {
  if (!restricts()) return "(any)";
  std::string text;
  const auto add = [&text](const std::string& address) {
    if (!text.empty()) text += ',';
    text += address;
  };
  for (const auto& a : v4_) add(text_of(AF_INET, &a));
  for (const auto& a : v6_) add(text_of(AF_INET6, &a));
  return text;
}

std::string describe_peer(const sockaddr* peer, socklen_t length) {
  if (peer == nullptr) return "?";
  if (peer->sa_family == AF_UNIX) return "unix";
  if (peer->sa_family == AF_INET && length >= static_cast<socklen_t>(sizeof(sockaddr_in))) {
    sockaddr_in in{};
    std::memcpy(&in, peer, sizeof in);
    return text_of(AF_INET, &in.sin_addr);
  }
  if (peer->sa_family == AF_INET6 && length >= static_cast<socklen_t>(sizeof(sockaddr_in6))) {
    sockaddr_in6 in6{};
    std::memcpy(&in6, peer, sizeof in6);
    return text_of(AF_INET6, &in6.sin6_addr);
  }
  return "?";
}

}  // namespace connector::fastcgi
