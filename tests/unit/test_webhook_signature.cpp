// The webhook signature (webhooks/signature.h): HMAC-SHA256 over timestamp "." body, checked
// against digests computed apart from OpenSSL (Python's hmac module), and the receiver's rule.
#define BOOST_TEST_MODULE webhook_signature
#include <boost/test/unit_test.hpp>
#include <string>

#include "webhooks/signature.h"

using namespace connector::webhooks;

BOOST_AUTO_TEST_CASE(the_signature_is_hmac_sha256_of_timestamp_dot_body) {
  BOOST_TEST(signature_v1("whsec_test", 1795772374, R"({"seq":"1"})") ==
             "v1=7065a3cd609de5b6ad9918debee0ce2e98b6fb8f45b92a6e45158947c8553e6e");
  BOOST_TEST(signature_v1("k", 0, "") ==
             "v1=6b4a4b8b3c40f1e8f53a3d36682e5f99f7ad2ac1df1c93dfe336f329167641e7");
  BOOST_TEST(signature_v1(std::string(100, 'x'), 1700000000, "a.b\n") ==
             "v1=a2663e675479e2f6971e42c094f4c27a2b540d2fa22b9cd498005c240dd8562a");
}

BOOST_AUTO_TEST_CASE(a_receiver_accepts_the_signed_delivery_within_its_tolerance) {
  const std::string body = R"({"seq":"42"})";
  const std::string header = signature_v1("s3cret", 1000, body);
  BOOST_TEST((verify_v1("s3cret", "1000", header, body, 1000, 300) == Verdict::kValid));
  BOOST_TEST((verify_v1("s3cret", "1000", header, body, 1300, 300) == Verdict::kValid));
  BOOST_TEST((verify_v1("s3cret", "1000", header, body, 700, 300) == Verdict::kValid));
  BOOST_TEST((verify_v1("s3cret", "1000", header, body, 1301, 300) == Verdict::kOutsideTolerance));
  BOOST_TEST((verify_v1("s3cret", "1000", header, body, 699, 300) == Verdict::kOutsideTolerance));
}

BOOST_AUTO_TEST_CASE(any_change_is_a_mismatch) {
  const std::string body = R"({"seq":"42"})";
  const std::string header = signature_v1("s3cret", 1000, body);
  BOOST_TEST((verify_v1("other", "1000", header, body, 1000, 300) == Verdict::kMismatch));
  BOOST_TEST((verify_v1("s3cret", "1001", header, body, 1000, 300) == Verdict::kMismatch));
  BOOST_TEST((verify_v1("s3cret", "1000", header, body + " ", 1000, 300) == Verdict::kMismatch));
  std::string flipped = header;
  flipped.back() = flipped.back() == '0' ? '1' : '0';
  BOOST_TEST((verify_v1("s3cret", "1000", flipped, body, 1000, 300) == Verdict::kMismatch));
}

BOOST_AUTO_TEST_CASE(malformed_headers_are_refused_before_any_comparison) {
  const std::string header = signature_v1("s3cret", 1000, "b");
  for (const char* timestamp :
       {"", "-5", "1e3", " 1000", "1000 ", "0x10", "9999999999999999999", "01000", "+1000"}) {
    BOOST_TEST((verify_v1("s3cret", timestamp, header, "b", 1000, 300) == Verdict::kMalformed),
               timestamp);
  }
  for (const std::string& signature : {std::string(""), header.substr(3), "v0=" + header.substr(3),
                                       header + "0", header.substr(0, header.size() - 1)}) {
    BOOST_TEST((verify_v1("s3cret", "1000", signature, "b", 1000, 300) == Verdict::kMalformed),
               signature);
  }
}

BOOST_AUTO_TEST_CASE(a_new_secret_is_32_random_bytes_in_hex) {
  const std::string a = new_secret();
  const std::string b = new_secret();
  BOOST_TEST(a.size() == 6 + 64);
  BOOST_TEST(a.starts_with("whsec_"));
  BOOST_TEST(a.find_first_not_of("0123456789abcdef", 6) == std::string::npos);
  BOOST_TEST(a != b);
}
