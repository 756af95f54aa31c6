// Fuzzes src/webhooks/signature.h: verify_v1, the receiver's check of a delivery (the tests'
// receiver runs it), and signature_v1. The input is lines: the secret, Connector-Timestamp,
// Connector-Signature, "NOW TOLERANCE" (two decimal integers; 0 300 when unreadable), then the
// body (the rest, newlines included). Against a reference written from the definition
// (HMAC-SHA256 built here from SHA-256 over the timestamp header as sent, "." and the body):
//  * verify_v1 gives the reference's verdict for the headers as given, and for the same
//    timestamp signed by a sender that follows the definition: kMalformed unless the timestamp
//    is the decimal signature_v1 writes (1 to 18 digits, no sign, no leading zero) and the
//    signature "v1=" and 64 characters; then kMismatch unless it is "v1=" and the lower-case hex
//    digest; then kOutsideTolerance unless |now - timestamp| <= tolerance (exact, whatever the
//    64-bit values: no overflow); else kValid.
//  * signature_v1 for that secret, timestamp and body verifies: kValid within the tolerance,
//    kOutsideTolerance outside it; the same header with any one hex digit changed to another is
//    kMismatch.
#include <openssl/sha.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "fuzz_check.h"
#include "webhooks/signature.h"

namespace {

using connector::webhooks::signature_v1;
using connector::webhooks::Verdict;
using connector::webhooks::verify_v1;

constexpr std::string_view kHexDigits = "0123456789abcdef";
constexpr std::size_t kBlock = 64;  // SHA-256's block size

using Digest = std::array<unsigned char, SHA256_DIGEST_LENGTH>;

Digest sha256(std::string_view text) {
  Digest out{};
  SHA256(reinterpret_cast<const unsigned char*>(text.data()), text.size(), out.data());
  return out;
}

// RFC 2104: H((K ^ opad) || H((K ^ ipad) || text)), K the key padded (or first hashed) to a block.
std::string hmac_sha256_hex(std::string_view key, std::string_view text) {
  std::string block(kBlock, '\0');
  if (key.size() > kBlock) {
    const Digest hashed = sha256(key);
    std::copy(hashed.begin(), hashed.end(), block.begin());
  } else {
    std::copy(key.begin(), key.end(), block.begin());
  }
  std::string inner = block;
  std::string outer = block;
  for (char& c : inner) c = static_cast<char>(c ^ 0x36);
  for (char& c : outer) c = static_cast<char>(c ^ 0x5c);
  const Digest inner_digest = sha256(inner + std::string(text));
  const Digest digest = sha256(outer + std::string(inner_digest.begin(), inner_digest.end()));
  std::string hex;
  for (const unsigned char byte : digest) {
    hex.push_back(kHexDigits[byte >> 4]);
    hex.push_back(kHexDigits[byte & 0x0f]);
  }
  return hex;
}

// The timestamp signature_v1 writes for a value in [0, 10^18): its shortest decimal.
std::optional<std::int64_t> timestamp_value(std::string_view text) {
  if (text.empty() || text.size() > 18 || (text.size() > 1 && text.front() == '0')) {
    return std::nullopt;
  }
  std::int64_t value = 0;
  for (const char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + (c - '0');
  }
  return value;
}

// |now - timestamp| <= tolerance, for a timestamp in [0, 10^18) and any now and tolerance.
bool within(std::int64_t timestamp, std::int64_t now, std::int64_t tolerance) {
  if (tolerance < 0) return false;
  return now >= timestamp ? now - timestamp <= tolerance : timestamp - tolerance <= now;
}

Verdict reference(std::string_view secret, std::string_view timestamp_header,
                  std::string_view signature_header, std::string_view body, std::int64_t now,
                  std::int64_t tolerance) {
  const auto timestamp = timestamp_value(timestamp_header);
  if (!timestamp || !signature_header.starts_with("v1=") || signature_header.size() != 3 + 64) {
    return Verdict::kMalformed;
  }
  const std::string signed_text = std::string(timestamp_header) + "." + std::string(body);
  if (signature_header.substr(3) != hmac_sha256_hex(secret, signed_text)) return Verdict::kMismatch;
  return within(*timestamp, now, tolerance) ? Verdict::kValid : Verdict::kOutsideTolerance;
}

struct Input {
  std::string_view secret, timestamp, signature, body;
  std::int64_t now = 0;
  std::int64_t tolerance = 300;
};

// The next line of `rest` (without its newline), which loses it; all of it when it has none.
std::string_view next_line(std::string_view& rest) {
  const std::size_t end = std::min(rest.find('\n'), rest.size());
  const std::string_view line = rest.substr(0, end);
  rest.remove_prefix(std::min(end + 1, rest.size()));
  return line;
}

Input read_input(std::string_view rest) {
  Input in;
  in.secret = next_line(rest);
  in.timestamp = next_line(rest);
  in.signature = next_line(rest);
  const std::string_view numbers = next_line(rest);
  in.body = rest;
  const char* const end = numbers.data() + numbers.size();
  std::int64_t now = 0;
  std::int64_t tolerance = 0;
  const auto first = std::from_chars(numbers.data(), end, now);
  if (first.ec == std::errc{} && first.ptr != end && *first.ptr == ' ') {
    const auto second = std::from_chars(first.ptr + 1, end, tolerance);
    if (second.ec == std::errc{} && second.ptr == end) {
      in.now = now;
      in.tolerance = tolerance;
    }
  }
  return in;
}

// signature_v1's header for a timestamp of the right form verifies, and only unchanged.
void check_signed(const Input& in, std::int64_t timestamp) {
  const std::string header = signature_v1(in.secret, timestamp, in.body);
  FUZZ_CHECK(header == "v1=" + hmac_sha256_hex(in.secret, std::to_string(timestamp) + "." +
                                                              std::string(in.body)));
  const std::string sent = std::to_string(timestamp);
  const Verdict expected =
      within(timestamp, in.now, in.tolerance) ? Verdict::kValid : Verdict::kOutsideTolerance;
  FUZZ_CHECK(verify_v1(in.secret, sent, header, in.body, in.now, in.tolerance) == expected);
  // Each digit changed to another one (which one: from the body's length, so it varies).
  const std::size_t step = 1 + in.body.size() % 15;
  for (std::size_t i = 3; i < header.size(); ++i) {
    std::string changed = header;
    changed[i] = kHexDigits[(kHexDigits.find(header[i]) + step) % kHexDigits.size()];
    FUZZ_CHECK(verify_v1(in.secret, sent, changed, in.body, in.now, in.tolerance) ==
               Verdict::kMismatch);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const Input in = read_input(std::string_view(reinterpret_cast<const char*>(data), size));
  FUZZ_CHECK(verify_v1(in.secret, in.timestamp, in.signature, in.body, in.now, in.tolerance) ==
             reference(in.secret, in.timestamp, in.signature, in.body, in.now, in.tolerance));
  // A sender that follows the definition, for the timestamp header as given.
  const std::string followed =
      "v1=" + hmac_sha256_hex(in.secret, std::string(in.timestamp) + "." + std::string(in.body));
  FUZZ_CHECK(verify_v1(in.secret, in.timestamp, followed, in.body, in.now, in.tolerance) ==
             reference(in.secret, in.timestamp, followed, in.body, in.now, in.tolerance));
  if (const auto timestamp = timestamp_value(in.timestamp)) check_signed(in, *timestamp);
  return 0;
}
