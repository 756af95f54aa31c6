#define BOOST_TEST_MODULE test_web_server_addrs
#include <arpa/inet.h>
#include <sys/un.h>

#include <boost/test/unit_test.hpp>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "fastcgi/web_server_addrs.h"

using connector::fastcgi::describe_peer;
using connector::fastcgi::WebServerAddrs;

namespace {

sockaddr_in v4(const char* text) {
  sockaddr_in in{};
  in.sin_family = AF_INET;
  in.sin_port = htons(40000);
  BOOST_REQUIRE(inet_pton(AF_INET, text, &in.sin_addr) == 1);
  return in;
}

sockaddr_in6 v6(const char* text) {
  sockaddr_in6 in6{};
  in6.sin6_family = AF_INET6;
  in6.sin6_port = htons(40000);
  BOOST_REQUIRE(inet_pton(AF_INET6, text, &in6.sin6_addr) == 1);
  return in6;
}

bool allows(const WebServerAddrs& addrs, const char* peer) {
  if (std::string(peer).find(':') != std::string::npos) {
    const auto in6 = v6(peer);
    return addrs.allows(reinterpret_cast<const sockaddr*>(&in6), sizeof in6);
  }
  const auto in = v4(peer);
  return addrs.allows(reinterpret_cast<const sockaddr*>(&in), sizeof in);
}

}  // namespace

BOOST_AUTO_TEST_CASE(unset_or_empty_allows_every_peer) {
  for (const WebServerAddrs& any :
       {WebServerAddrs{}, WebServerAddrs::parse(""), WebServerAddrs::parse(" , ,")}) {
    BOOST_TEST(!any.restricts());
    BOOST_TEST(any.describe() == "(any)");
    for (const char* peer : {"127.0.0.1", "10.1.2.3", "::1", "2001:db8::7"}) {
      BOOST_TEST(allows(any, peer), peer);
    }
  }
}

BOOST_AUTO_TEST_CASE(only_listed_peers_are_allowed) {
  const auto addrs = WebServerAddrs::parse("127.0.0.1, 10.1.2.3,2001:db8::7");
  BOOST_TEST(addrs.restricts());
  BOOST_TEST(addrs.describe() == "127.0.0.1,10.1.2.3,2001:db8::7");
  for (const char* peer : {"127.0.0.1", "10.1.2.3", "2001:db8::7", "::ffff:10.1.2.3"}) {
    BOOST_TEST(allows(addrs, peer), peer);
  }
  for (const char* peer : {"127.0.0.2", "10.1.2.4", "0.0.0.0", "::1", "2001:db8::8",
                           "::ffff:127.0.0.2", "::10.1.2.3"}) {
    BOOST_TEST(!allows(addrs, peer), peer);
  }
}

BOOST_AUTO_TEST_CASE(unix_socket_peers_have_no_address_and_are_always_allowed) {
  const auto addrs = WebServerAddrs::parse("127.0.0.1");
  sockaddr_un un{};
  un.sun_family = AF_UNIX;
  BOOST_TEST(addrs.allows(reinterpret_cast<const sockaddr*>(&un), sizeof(sa_family_t)));
  BOOST_TEST(describe_peer(reinterpret_cast<const sockaddr*>(&un), sizeof(sa_family_t)) == "unix");
}

BOOST_AUTO_TEST_CASE(a_truncated_address_is_refused) {
  const auto addrs = WebServerAddrs::parse("127.0.0.1");
  const auto in = v4("127.0.0.1");
  BOOST_TEST(!addrs.allows(reinterpret_cast<const sockaddr*>(&in), sizeof in - 1));
  BOOST_TEST(!addrs.allows(nullptr, 0));
  BOOST_TEST(WebServerAddrs{}.allows(nullptr, 0));
}

BOOST_AUTO_TEST_CASE(entries_that_are_not_addresses_are_refused_by_name) {
  for (const char* bad : {"localhost", "127.1", "0x7f000001", "10.0.0.0/8", "127.0.0.1:9000",
                          "127.0.0.1;10.0.0.1", "1.2.3.256", "::1/128"}) {
    BOOST_TEST_CONTEXT(bad) {
      try {
        WebServerAddrs::parse(std::string("127.0.0.1,") + bad);
        BOOST_FAIL("accepted");
      } catch (const std::invalid_argument& e) {
        const std::string message = e.what();
        BOOST_TEST(message.find("FCGI_WEB_SERVER_ADDRS: '" + std::string(bad) + "'") == 0u);
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(peers_are_described_by_address) {
  const auto in = v4("127.0.0.2");
  const auto in6 = v6("2001:db8::7");
  BOOST_TEST(describe_peer(reinterpret_cast<const sockaddr*>(&in), sizeof in) == "127.0.0.2");
  BOOST_TEST(describe_peer(reinterpret_cast<const sockaddr*>(&in6), sizeof in6) == "2001:db8::7");
}

BOOST_AUTO_TEST_CASE(from_environment_reads_the_variable) {
  ::unsetenv("FCGI_WEB_SERVER_ADDRS");
  BOOST_TEST(!WebServerAddrs::from_environment().restricts());
  ::setenv("FCGI_WEB_SERVER_ADDRS", "127.0.0.1", 1);
  BOOST_TEST(WebServerAddrs::from_environment().describe() == "127.0.0.1");
  ::setenv("FCGI_WEB_SERVER_ADDRS", "nginx.internal", 1);
  BOOST_CHECK_THROW(WebServerAddrs::from_environment(), std::invalid_argument);
  ::unsetenv("FCGI_WEB_SERVER_ADDRS");
}
