#pragma once
// FCGI_WEB_SERVER_ADDRS: the web servers a FastCGI worker listening on TCP takes connections
// from. libfcgi's convention: a comma-separated list of IP addresses; unset or empty, any peer.
// The worker accepts its connections itself (fcgi/worker_pool.cpp) and applies the list there,
// to IPv4 and IPv6 peers alike (libfcgi's own check, which the worker bypasses, looks at IPv4
// peers only). Peers on a unix socket have no address: the list does not apply to them.
#include <netinet/in.h>
#include <sys/socket.h>

#include <string>
#include <string_view>
#include <vector>

namespace connector::fastcgi {

class WebServerAddrs {
 public:
  static constexpr const char* kVariable = "FCGI_WEB_SERVER_ADDRS";

  // Any peer.
  WebServerAddrs() = default;

  // Parses a list such as "127.0.0.1, 10.1.2.3, ::1" (white space around entries and empty
  // entries are ignored). Throws std::invalid_argument naming an entry that is not an IPv4
  // address in dotted-quad form or an IPv6 address: a typo must not open or close the worker
  // silently.
  static WebServerAddrs parse(std::string_view list);

  // parse() of the variable in the environment; any peer when it is unset.
  static WebServerAddrs from_environment();

  // False when any peer may connect (the list is unset or empty).
  bool restricts() const { return !v4_.empty() || !v6_.empty(); }

  // Whether the peer of an accepted connection may speak to the worker: a listed address (an
  // IPv4-mapped IPv6 peer matches its IPv4 address), any address when nothing is listed, and
  // always a unix-socket peer.
  bool allows(const sockaddr* peer, socklen_t length) const;

  // "127.0.0.1,::1", or "(any)" when nothing is listed.
  std::string describe() const;

 private:
  std::vector<in_addr> v4_;
  std::vector<in6_addr> v6_;
};

// The peer's address as text ("127.0.0.2", "::1"), "unix" for a unix-socket peer.
std::string describe_peer(const sockaddr* peer, socklen_t length);

}  // namespace connector::fastcgi
