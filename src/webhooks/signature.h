#pragma once
// The signature of a webhook delivery (docs/webhooks.md): the receiver recomputes
// HMAC-SHA256(secret, timestamp + "." + body) and compares it, in constant time, with the hex
// digest of the header `Connector-Signature: v1=<hex>`, then checks that `Connector-Timestamp`
// is within its tolerance of its own clock (a replayed request is refused once it is older).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace connector::webhooks {

// `Connector-Signature`'s value: "v1=" and 64 lower-case hex digits.
std::string signature_v1(std::string_view secret, std::int64_t timestamp, std::string_view body);

enum class Verdict { kValid, kMalformed, kMismatch, kOutsideTolerance };

// What a receiver does with a delivery (also what the tests' receiver runs): the timestamp as
// sent (decimal seconds since the epoch), the signature header as sent, the raw body.
// kMalformed unless the timestamp is spelt as signature_v1 signs it (1 to 18 digits, no sign, no
// leading zero) and the signature is "v1=" and 64 characters; then kMismatch unless those are
// the digest; then kOutsideTolerance unless |now - timestamp| <= tolerance (exact for any
// 64-bit clock and tolerance; a negative tolerance admits nothing).
Verdict verify_v1(std::string_view secret, std::string_view timestamp_header,
                  std::string_view signature_header, std::string_view body, std::int64_t now_unix_s,
                  std::int64_t tolerance_s);

// A new subscription's secret: "whsec_" and 64 hex digits from OpenSSL's RNG (32 bytes).
// Empty when the RNG fails (the caller refuses to create the subscription).
std::string new_secret();

}  // namespace connector::webhooks
