#define BOOST_TEST_MODULE test_fuzz_regressions
// Inputs that crashed a fuzz target (tests/fuzz/), each with its exact expected result. The
// input is also kept in the target's corpus (tests/fuzz/corpus/<target>/regression_*).
#include <boost/test/unit_test.hpp>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "admin/import_document.h"
#include "webhooks/receiver_url.h"
#include "webhooks/signature.h"

using namespace connector;

namespace {

// The ImportError message, or "<no error>".
std::string import_error_of(const std::string& text) {
  try {
    admin::read_import_document(text, {});
  } catch (const admin::ImportError& e) {
    return e.what();
  }
  return "<no error>";
}

std::string nested_arrays(std::size_t depth, bool closed) {
  return std::string(depth, '[') + (closed ? std::string(depth, ']') : std::string());
}

// parse_receiver_url's refusal, or "<accepted> " and the URL as taken.
std::string receiver_url_of(const std::string& text) {
  const auto result = webhooks::parse_receiver_url(text, {"s"});
  if (const auto* url = std::get_if<webhooks::ReceiverUrl>(&result)) {
    return "<accepted> " + url->url;
  }
  return std::get<webhooks::UrlRefused>(result).reason;
}

}  // namespace

// fuzz_import_document: RapidJSON's recursive parser overflowed the stack on deeply nested
// arrays (corpus: regression_deep_nesting). The reader now parses iteratively.
BOOST_AUTO_TEST_CASE(deeply_nested_arrays_are_an_import_error_not_a_stack_overflow) {
  constexpr std::size_t kDepth = 1'000'000;
  BOOST_TEST(import_error_of("{\"networks\":" + nested_arrays(kDepth, true) + "}") ==
             "networks[0]: must be an object");
  BOOST_TEST(import_error_of(nested_arrays(kDepth, true)) == "the document must be a JSON object");
  BOOST_TEST(import_error_of("{\"networks\":" + nested_arrays(kDepth, false)) ==
             "not valid JSON at byte 1000012: Invalid value.");
}

// fuzz_receiver_url: what libcurl takes but the rules refuse (corpus: regression_*). A NUL byte
// ended libcurl's C string, so the rest was never judged; port 0; an empty user name or password
// ("@" alone) passed as none; a percent-escape or a byte above 0x7f in the host, which libcurl
// takes (decoded) and writes back escaped or raw: no host a resolver takes.
BOOST_AUTO_TEST_CASE(receiver_urls_libcurl_takes_that_the_rules_refuse) {
  BOOST_TEST(receiver_url_of(std::string("https://e.example/\0@other.example", 34)) ==
             "a NUL byte in the URL");
  BOOST_TEST(receiver_url_of("https://e.example:0/") == "a port of 1 to 65535 is required");
  for (const char* text : {"http://@s/", "https://@e.example/", "https://:@e.example/"}) {
    BOOST_TEST(receiver_url_of(text) == "a user name or password in the URL", text);
  }
  const std::string host_rule =
      "a host name of letters, digits, '-', '_' and '.', or an IP address";
  for (const char* text : {"https://exc%ange.example.com/", "https://[fe80::1%25eth0]/"}) {
    BOOST_TEST(receiver_url_of(text) == host_rule, text);
  }
  // A byte above 0x7f is refused before libcurl sees it (the column is ascii).
  BOOST_TEST(receiver_url_of("https://b\u00fccher.example/") ==
             "only printable ASCII (percent-encode the rest; a host in its xn-- form)");
  // A percent-escape that decodes to a plain name is that name; an IDN is taken as xn--.
  BOOST_TEST(receiver_url_of("https://e%41.example/") == "<accepted> https://ea.example/");
  BOOST_TEST(receiver_url_of("https://xn--bcher-kva.example/") ==
             "<accepted> https://xn--bcher-kva.example/");
}

// fuzz_receiver_url: 2048 bytes as given, 2049 as libcurl writes it (the "/" of the path added),
// one more than the database column holds (corpus: regression_query_2048_grows).
BOOST_AUTO_TEST_CASE(a_receiver_url_is_at_most_2048_bytes_as_libcurl_writes_it) {
  const std::string query = "https://e.example?" + std::string(2048 - 18, 'a');
  BOOST_TEST(receiver_url_of(query) == "a URL of 1 to 2048 bytes is required");
  const std::string with_path = "https://e.example/?" + std::string(2048 - 19, 'a');
  BOOST_TEST(receiver_url_of(with_path) == "<accepted> " + with_path);
  BOOST_TEST(receiver_url_of("https://1/") == "<accepted> https://0.0.0.1/");
}

// fuzz_receiver_url: libcurl decodes a host's percent-escapes after it has looked for an IPv4
// address in it: "0x%399" was taken as the name "0x99", which the URL written back (and a
// resolver) reads as the address 0.0.0.153 (corpus: regression_escaped_ipv4_host). A URL must
// read back as it was taken.
BOOST_AUTO_TEST_CASE(a_receiver_url_reads_back_as_it_was_taken) {
  const std::string rule = "a URL libcurl reads otherwise once written (an escape in the host)";
  BOOST_TEST(receiver_url_of("https:/0x%399") == rule);
  BOOST_TEST(receiver_url_of("https://%31/") == rule);  // the name "1", read back as 0.0.0.1
  BOOST_TEST(receiver_url_of("https://0x99/") == "<accepted> https://0.0.0.153/");
  // An escape whose name reads back as itself is that name.
  BOOST_TEST(receiver_url_of("https://127.0.0.%31/") == "<accepted> https://127.0.0.1/");
}

// fuzz_webhook_signature: a timestamp spelt otherwise than signature_v1 writes it was read as
// its value, so the signature was checked against text the sender had not signed: "01000"
// verified with the signature of "1000" and not with its own (corpus: regression_leading_zero,
// regression_minus_zero). Now both are malformed.
BOOST_AUTO_TEST_CASE(a_timestamp_spelt_otherwise_is_malformed) {
  using webhooks::Verdict;
  const std::string body = R"({"seq":42})";
  // Each with the signature of the value it spells.
  for (const auto& [timestamp, value] :
       {std::pair<const char*, std::int64_t>{"01000", 1000}, {"-0", 0}, {"00", 0}, {"0001", 1}}) {
    const std::string signature = webhooks::signature_v1("s3cret", value, body);
    BOOST_TEST((webhooks::verify_v1("s3cret", timestamp, signature, body, value, 300) ==
                Verdict::kMalformed),
               timestamp);
  }
  // "v1=" + hex(HMAC-SHA256("s3cret", "01000." + body)), computed with Python's hmac module.
  const std::string signed_as_sent =
      "v1=e9d88c8b5a4a66ac5f4d47bea40f877625c8483a8aeaef1724671b0044abd35e";
  BOOST_TEST((webhooks::verify_v1("s3cret", "01000", signed_as_sent, body, 1000, 300) ==
              Verdict::kMalformed));
  BOOST_TEST((webhooks::verify_v1("s3cret", "0", webhooks::signature_v1("s3cret", 0, body), body, 0,
                                  300) == Verdict::kValid));
}

// fuzz_webhook_signature: now - timestamp overflowed for a clock far from the timestamp
// (UBSan: signed integer overflow; corpus: regression_now_min). The tolerance is now exact for
// any 64-bit clock and tolerance.
BOOST_AUTO_TEST_CASE(the_tolerance_holds_for_any_clock_without_overflow) {
  using webhooks::Verdict;
  constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  const std::string body = "b";
  const auto verdict = [&](std::int64_t timestamp, std::int64_t now, std::int64_t tolerance) {
    return webhooks::verify_v1("k", std::to_string(timestamp),
                               webhooks::signature_v1("k", timestamp, body), body, now, tolerance);
  };
  BOOST_TEST((verdict(999'999'999'999'999'999, kMin, 300) == Verdict::kOutsideTolerance));
  BOOST_TEST((verdict(0, kMin, kMax) == Verdict::kOutsideTolerance));  // 2^63 apart
  BOOST_TEST((verdict(1, kMin + 1, kMax) == Verdict::kOutsideTolerance));
  BOOST_TEST((verdict(0, kMin + 1, kMax) == Verdict::kValid));  // exactly kMax apart
  BOOST_TEST((verdict(0, kMax, kMax) == Verdict::kValid));
  BOOST_TEST((verdict(1, kMax, kMax) == Verdict::kValid));
  BOOST_TEST((verdict(1000, 1000, -1) == Verdict::kOutsideTolerance));
}
