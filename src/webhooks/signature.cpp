#include "webhooks/signature.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <array>

namespace connector::webhooks {
namespace {

constexpr std::string_view kPrefix = "v1=";
constexpr std::size_t kDigestBytes = 32;

std::string hex(const unsigned char* bytes, std::size_t size) {
  constexpr std::string_view kDigits = "0123456789abcdef";
  std::string out;
  out.reserve(size * 2);
  for (std::size_t i = 0; i < size; ++i) {
    out.push_back(kDigits[bytes[i] >> 4]);
    out.push_back(kDigits[bytes[i] & 0x0f]);
  }
  return out;
}

std::string digest_hex(std::string_view secret, std::string_view signed_text) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int size = 0;
  const auto* result = HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
                            reinterpret_cast<const unsigned char*>(signed_text.data()),
                            signed_text.size(), digest.data(), &size);
  if (result == nullptr || size != kDigestBytes) return {};
  return hex(digest.data(), size);
}

// The timestamp as signature_v1 writes it, and nothing else: 1 to 18 digits, no sign, no
// leading zero. The signature covers the header's bytes, so another spelling of the same value
// ("01000", "-0") would be checked against text its sender did not sign.
std::optional<std::int64_t> timestamp_value(std::string_view text) {
  if (text.empty() || text.size() > 18 || (text.size() > 1 && text.front() == '0') ||
      text.find_first_not_of("0123456789") != std::string_view::npos) {
    return std::nullopt;
  }
  std::int64_t value = 0;
  for (const char digit : text) value = value * 10 + (digit - '0');  // 18 digits fit
  return value;
}

// |now - timestamp| <= tolerance without overflow, for a timestamp in [0, 10^18) and any clock
// and tolerance (a negative tolerance admits nothing).
bool within_tolerance(std::int64_t timestamp, std::int64_t now, std::int64_t tolerance) {
  if (tolerance < 0) return false;
  return now >= timestamp ? now - timestamp <= tolerance : timestamp - tolerance <= now;
}

}  // namespace

std::string signature_v1(std::string_view secret, std::int64_t timestamp, std::string_view body) {
  std::string signed_text = std::to_string(timestamp);
  signed_text += '.';
  signed_text += body;
  return std::string(kPrefix) + digest_hex(secret, signed_text);
}

Verdict verify_v1(std::string_view secret, std::string_view timestamp_header,
                  std::string_view signature_header, std::string_view body, std::int64_t now_unix_s,
                  std::int64_t tolerance_s) {
  const auto timestamp = timestamp_value(timestamp_header);
  if (!timestamp || !signature_header.starts_with(kPrefix) ||
      signature_header.size() != kPrefix.size() + 2 * kDigestBytes) {
    return Verdict::kMalformed;
  }
  const std::string expected = signature_v1(secret, *timestamp, body);
  if (expected.size() != signature_header.size() ||
      CRYPTO_memcmp(expected.data(), signature_header.data(), expected.size()) != 0) {
    return Verdict::kMismatch;
  }
  return within_tolerance(*timestamp, now_unix_s, tolerance_s) ? Verdict::kValid
                                                               : Verdict::kOutsideTolerance;
}

std::string new_secret() {
  std::array<unsigned char, 32> bytes{};
  if (RAND_bytes(bytes.data(), static_cast<int>(bytes.size())) != 1) return {};
  return "whsec_" + hex(bytes.data(), bytes.size());
}

}  // namespace connector::webhooks
