// The receivers' address screen (webhooks/address_policy.h): each special-purpose range at its
// edges, and IPv4 smuggled inside IPv6.
#define BOOST_TEST_MODULE webhook_addresses
#include <arpa/inet.h>

#include <boost/test/unit_test.hpp>
#include <string>

#include "webhooks/address_policy.h"

using namespace connector::webhooks;

namespace {

std::string kind_of(const char* text) {
  in_addr v4{};
  if (::inet_pton(AF_INET, text, &v4) == 1) return std::string(describe(classify(v4)));
  in6_addr v6{};
  BOOST_REQUIRE_MESSAGE(::inet_pton(AF_INET6, text, &v6) == 1, text);
  return std::string(describe(classify(v6)));
}

}  // namespace

BOOST_AUTO_TEST_CASE(ipv4_ranges_at_their_edges) {
  const std::pair<const char*, const char*> cases[] = {
      {"0.0.0.0", "unspecified"},
      {"0.255.255.255", "unspecified"},
      {"1.0.0.0", "public"},
      {"9.255.255.255", "public"},
      {"10.0.0.0", "private"},
      {"10.255.255.255", "private"},
      {"11.0.0.0", "public"},
      {"100.63.255.255", "public"},
      {"100.64.0.0", "private"},
      {"100.127.255.255", "private"},
      {"100.128.0.0", "public"},
      {"126.255.255.255", "public"},
      {"127.0.0.1", "loopback"},
      {"127.255.255.255", "loopback"},
      {"169.253.255.255", "public"},
      {"169.254.169.254", "link-local"},
      {"169.255.0.0", "public"},
      {"172.15.255.255", "public"},
      {"172.16.0.0", "private"},
      {"172.31.255.255", "private"},
      {"172.32.0.0", "public"},
      {"192.0.0.8", "reserved"},
      {"192.0.2.1", "reserved"},
      {"192.0.3.0", "public"},
      {"192.168.0.0", "private"},
      {"192.168.255.255", "private"},
      {"192.169.0.0", "public"},
      {"198.17.255.255", "public"},
      {"198.18.0.0", "reserved"},
      {"198.19.255.255", "reserved"},
      {"198.20.0.0", "public"},
      {"198.51.100.7", "reserved"},
      {"203.0.113.9", "reserved"},
      {"223.255.255.255", "public"},
      {"224.0.0.1", "multicast or broadcast"},
      {"239.255.255.255", "multicast or broadcast"},
      {"240.0.0.0", "reserved"},
      {"255.255.255.254", "reserved"},
      {"255.255.255.255", "multicast or broadcast"},
      {"8.8.8.8", "public"},
  };
  for (const auto& [address, kind] : cases) BOOST_TEST(kind_of(address) == kind, address);
}

BOOST_AUTO_TEST_CASE(ipv6_ranges) {
  const std::pair<const char*, const char*> cases[] = {
      {"::", "unspecified"},
      {"::1", "loopback"},
      {"::2", "unspecified"},
      {"fc00::1", "private"},
      {"fdff:ffff::1", "private"},
      {"fe80::1", "link-local"},
      {"febf::1", "link-local"},
      {"fec0::1", "private"},
      {"ff02::1", "multicast or broadcast"},
      {"2001:db8::1", "reserved"},
      {"2001::1", "reserved"},
      {"2001:1ff::1", "reserved"},
      {"2001:200::1", "public"},
      {"100::1", "reserved"},
      {"2606:4700::1111", "public"},
      {"2a00:1450:4001::200e", "public"},
  };
  for (const auto& [address, kind] : cases) BOOST_TEST(kind_of(address) == kind, address);
}

BOOST_AUTO_TEST_CASE(ipv4_inside_ipv6_is_judged_as_ipv4) {
  const std::pair<const char*, const char*> cases[] = {
      {"::ffff:127.0.0.1", "loopback"},    {"::ffff:169.254.169.254", "link-local"},
      {"::ffff:8.8.8.8", "public"},        {"::10.0.0.1", "private"},
      {"64:ff9b::192.168.1.1", "private"}, {"64:ff9b::1.1.1.1", "public"},
      {"2002:7f00:1::", "loopback"},       {"2002:0808:0808::", "public"},
  };
  for (const auto& [address, kind] : cases) BOOST_TEST(kind_of(address) == kind, address);
}
