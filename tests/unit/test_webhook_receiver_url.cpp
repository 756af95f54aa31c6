// A receiver's URL (webhooks/receiver_url.h): what `connector-admin webhook add --url` accepts
// and why it refuses the rest.
#define BOOST_TEST_MODULE webhook_receiver_url
#include <boost/test/unit_test.hpp>
#include <string>
#include <variant>
#include <vector>

#include "webhooks/receiver_url.h"

using namespace connector::webhooks;

namespace {

const std::vector<std::string> kHttpHosts{"127.0.0.1", "Receiver.Test"};

ReceiverUrl accepted(const char* text) {
  auto result = parse_receiver_url(text, kHttpHosts);
  const auto* refusal = std::get_if<UrlRefused>(&result);
  BOOST_REQUIRE_MESSAGE(refusal == nullptr, text << ": " << (refusal ? refusal->reason : ""));
  return std::get<ReceiverUrl>(result);
}

std::string refused(const std::string& text) {
  auto result = parse_receiver_url(text, kHttpHosts);
  BOOST_REQUIRE_MESSAGE(std::holds_alternative<UrlRefused>(result), text);
  return std::get<UrlRefused>(result).reason;
}

}  // namespace

BOOST_AUTO_TEST_CASE(https_urls_are_taken_normalised) {
  const auto url = accepted("HTTPS://Exchange.Example.COM/hooks/connector?x=1");
  BOOST_TEST(url.scheme == "https");
  BOOST_TEST(url.host == "exchange.example.com");
  BOOST_TEST(url.port == 443);
  BOOST_TEST(url.url == "https://exchange.example.com/hooks/connector?x=1");
  const auto v6 = accepted("https://[2001:db8::1]:8443/h");
  BOOST_TEST(v6.host == "2001:db8::1");
  BOOST_TEST(v6.port == 8443);
}

BOOST_AUTO_TEST_CASE(http_only_to_an_allow_listed_host) {
  const auto url = accepted("http://127.0.0.1:8081/receiver");
  BOOST_TEST((url.scheme == "http" && url.host == "127.0.0.1" && url.port == 8081));
  BOOST_TEST(accepted("http://receiver.test/").port == 80);
  BOOST_TEST(refused("http://exchange.example.com/") ==
             "http to a host not in webhooks_allow_hosts; use https");
  BOOST_TEST(refused("http://127.0.0.2/") ==
             "http to a host not in webhooks_allow_hosts; use https");
}

BOOST_AUTO_TEST_CASE(other_schemes_credentials_and_fragments_are_refused) {
  BOOST_TEST(refused("ftp://exchange.example.com/") ==
             "only https (or http to an allow-listed host)");
  BOOST_TEST(refused("file:///etc/passwd") == "only https (or http to an allow-listed host)");
  BOOST_TEST(refused("https://user:secret@exchange.example.com/") ==
             "a user name or password in the URL");
  BOOST_TEST(refused("https://user@exchange.example.com/") == "a user name or password in the URL");
  BOOST_TEST(refused("https://exchange.example.com/#part") == "a fragment in the URL");
}

BOOST_AUTO_TEST_CASE(what_is_not_a_url_is_refused) {
  BOOST_TEST(refused("") == "a URL of 1 to 2048 bytes is required");
  BOOST_TEST(refused("https://e.example/" + std::string(2048, 'a')) ==
             "a URL of 1 to 2048 bytes is required");
  for (const char* text : {"exchange.example.com/hook", "https://", "https://e.example:99999/",
                           "https://e.example:-1/"}) {
    BOOST_TEST(refused(text).starts_with("not a URL: "), text);
  }
  for (const char* text : {"https://exa mple.com/", "https://e.example/caf\xc3\xa9",
                           "https://b\xc3\xbc"
                           "cher.example/",
                           "https://e.example/\x7f", "https://e.example/\th"}) {
    BOOST_TEST(
        refused(text) == "only printable ASCII (percent-encode the rest; a host in its xn-- form)",
        text);
  }
  BOOST_TEST(accepted("https://xn--bcher-kva.example/caf%C3%A9").host == "xn--bcher-kva.example");
}

BOOST_AUTO_TEST_CASE(the_configs_host_list_is_split_at_commas) {
  BOOST_TEST(allowed_hosts("") == std::vector<std::string>{});
  BOOST_TEST(allowed_hosts(" , ,") == std::vector<std::string>{});
  BOOST_TEST(allowed_hosts("hooks.internal,127.0.0.1") ==
             (std::vector<std::string>{"hooks.internal", "127.0.0.1"}));
  BOOST_TEST(allowed_hosts(" Receiver.Test ,\t::1\t,,") ==
             (std::vector<std::string>{"Receiver.Test", "::1"}));
  // As the URL check takes it: case-insensitive.
  BOOST_TEST(std::holds_alternative<ReceiverUrl>(
      parse_receiver_url("http://receiver.test/h", allowed_hosts("x.test, RECEIVER.test"))));
}
