#include "webhooks/address_policy.h"

#include <array>
#include <cstdint>

namespace connector::webhooks {
namespace {

struct Range4 {
  std::uint32_t network;
  unsigned prefix;
  AddressKind kind;
};

constexpr std::uint32_t ip4(unsigned a, unsigned b, unsigned c, unsigned d) {
  return (a << 24) | (b << 16) | (c << 8) | d;
}

// IANA's special-purpose registry, what a delivery must not reach.
constexpr std::array kRanges4{
    Range4{ip4(0, 0, 0, 0), 8, AddressKind::kUnspecified},
    Range4{ip4(10, 0, 0, 0), 8, AddressKind::kPrivate},
    Range4{ip4(100, 64, 0, 0), 10, AddressKind::kPrivate},
    Range4{ip4(127, 0, 0, 0), 8, AddressKind::kLoopback},
    Range4{ip4(169, 254, 0, 0), 16, AddressKind::kLinkLocal},
    Range4{ip4(172, 16, 0, 0), 12, AddressKind::kPrivate},
    Range4{ip4(192, 0, 0, 0), 24, AddressKind::kReserved},
    Range4{ip4(192, 0, 2, 0), 24, AddressKind::kReserved},
    Range4{ip4(192, 88, 99, 0), 24, AddressKind::kReserved},
    Range4{ip4(192, 168, 0, 0), 16, AddressKind::kPrivate},
    Range4{ip4(198, 18, 0, 0), 15, AddressKind::kReserved},
    Range4{ip4(198, 51, 100, 0), 24, AddressKind::kReserved},
    Range4{ip4(203, 0, 113, 0), 24, AddressKind::kReserved},
    Range4{ip4(255, 255, 255, 255), 32, AddressKind::kMulticast},
    Range4{ip4(224, 0, 0, 0), 4, AddressKind::kMulticast},
    Range4{ip4(240, 0, 0, 0), 4, AddressKind::kReserved},
};

bool in_range(std::uint32_t address, const Range4& range) {
  const std::uint32_t mask = range.prefix == 0 ? 0 : ~std::uint32_t{0} << (32 - range.prefix);
  return (address & mask) == range.network;
}

AddressKind classify_host_order(std::uint32_t address) {
  for (const auto& range : kRanges4) {
    if (in_range(address, range)) return range.kind;
  }
  return AddressKind::kPublic;
}

std::uint32_t ip4_at(const in6_addr& address, std::size_t offset) {
  const auto* b = address.s6_addr;
  return (std::uint32_t{b[offset]} << 24) | (std::uint32_t{b[offset + 1]} << 16) |
         (std::uint32_t{b[offset + 2]} << 8) | std::uint32_t{b[offset + 3]};
}

bool starts_with(const in6_addr& address, std::initializer_list<unsigned> bytes) {
  std::size_t i = 0;
  for (const unsigned byte : bytes) {
    if (address.s6_addr[i++] != byte) return false;
  }
  return true;
}

bool all_zero(const in6_addr& address, std::size_t from, std::size_t to) {
  for (std::size_t i = from; i < to; ++i) {
    if (address.s6_addr[i] != 0) return false;
  }
  return true;
}

}  // namespace

AddressKind classify(const in_addr& address) { return classify_host_order(ntohl(address.s_addr)); }

AddressKind classify(const in6_addr& address) {
  const auto* b = address.s6_addr;
  if (all_zero(address, 0, 16)) return AddressKind::kUnspecified;
  if (all_zero(address, 0, 15) && b[15] == 1) return AddressKind::kLoopback;
  // ::ffff:a.b.c.d (mapped), and the deprecated ::a.b.c.d (compatible).
  if (all_zero(address, 0, 10) &&
      ((b[10] == 0xff && b[11] == 0xff) || (b[10] == 0 && b[11] == 0))) {
    return classify_host_order(ip4_at(address, 12));
  }
  if (starts_with(address, {0x00, 0x64, 0xff, 0x9b}) && all_zero(address, 4, 12)) {
    return classify_host_order(ip4_at(address, 12));  // NAT64's well-known prefix
  }
  if (b[0] == 0x20 && b[1] == 0x02) return classify_host_order(ip4_at(address, 2));  // 6to4
  if ((b[0] & 0xfe) == 0xfc) return AddressKind::kPrivate;                           // fc00::/7
  if (b[0] == 0xfe && (b[1] & 0xc0) == 0x80) return AddressKind::kLinkLocal;         // fe80::/10
  if (b[0] == 0xfe && (b[1] & 0xc0) == 0xc0) return AddressKind::kPrivate;           // fec0::/10
  if (b[0] == 0xff) return AddressKind::kMulticast;
  if (starts_with(address, {0x20, 0x01, 0x0d, 0xb8})) return AddressKind::kReserved;  // docs
  if (starts_with(address, {0x01, 0x00}) && all_zero(address, 2, 8)) {
    return AddressKind::kReserved;  // 100::/64, discard
  }
  if (b[0] == 0x20 && b[1] == 0x01 && (b[2] & 0xfe) == 0) {
    return AddressKind::kReserved;  // 2001::/23, IETF protocol assignments (Teredo among them)
  }
  return AddressKind::kPublic;
}

std::string_view describe(AddressKind kind) {
  switch (kind) {
    case AddressKind::kPublic:
      return "public";
    case AddressKind::kLoopback:
      return "loopback";
    case AddressKind::kPrivate:
      return "private";
    case AddressKind::kLinkLocal:
      return "link-local";
    case AddressKind::kUnspecified:
      return "unspecified";
    case AddressKind::kMulticast:
      return "multicast or broadcast";
    case AddressKind::kReserved:
      return "reserved";
  }
  return "unknown";
}

}  // namespace connector::webhooks
