#pragma once
// Which resolved addresses a webhook may be delivered to: a receiver's URL must not reach the
// node's own network (SSRF). The deliverer resolves the host itself, checks every address
// here, and connects to the one it checked (no second lookup, so no DNS rebinding).
#include <netinet/in.h>

#include <string_view>

namespace connector::webhooks {

enum class AddressKind {
  kPublic,       // routable on the internet: allowed
  kLoopback,     // 127.0.0.0/8, ::1
  kPrivate,      // RFC 1918, 100.64.0.0/10 (shared), fc00::/7 (unique local), fec0::/10
  kLinkLocal,    // 169.254.0.0/16 (cloud metadata), fe80::/10
  kUnspecified,  // 0.0.0.0/8, ::
  kMulticast,    // 224.0.0.0/4, ff00::/8, 255.255.255.255
  kReserved,     // documentation, benchmarking, protocol assignments, 240.0.0.0/4, 100::/64
};

AddressKind classify(const in_addr& address);
// IPv4 inside IPv6 (::ffff:a.b.c.d, 64:ff9b::/96, 2002::/16 6to4) is judged as that IPv4.
AddressKind classify(const in6_addr& address);

std::string_view describe(AddressKind kind);  // for the refusal's log line

}  // namespace connector::webhooks
