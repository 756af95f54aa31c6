#include "chain/bytes.h"

#include <algorithm>

namespace connector::chain {
namespace {

constexpr char kHexDigits[] = "0123456789abcdef";

// Value of one hex digit, or -1 when c is not one.
int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::string to_hex(std::span<const std::uint8_t> bytes) {
  std::string out;
  out.reserve(bytes.size() * 2);
  for (std::uint8_t b : bytes) {
    out.push_back(kHexDigits[b >> 4]);
    out.push_back(kHexDigits[b & 0x0f]);
  }
  return out;
}

std::optional<Bytes> from_hex(std::string_view hex) {
  if (hex.size() % 2 != 0) return std::nullopt;
  Bytes out;
  out.reserve(hex.size() / 2);
  for (std::size_t i = 0; i < hex.size(); i += 2) {
    const int hi = hex_value(hex[i]);
    const int lo = hex_value(hex[i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out.push_back(static_cast<std::uint8_t>((hi << 4) | lo));
  }
  return out;
}

bool is_hex_digits(std::string_view text) {
  for (char c : text) {
    if (hex_value(c) < 0) return false;
  }
  return true;
}

std::string ascii_lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) {
    return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : static_cast<char>(c);
  });
  return out;
}

std::optional<Hash32> parse_hash32(std::string_view text) {
  // Only a lower-case "0x": the wire format never uses "0X".
  if (text.size() != 66 || !text.starts_with("0x")) return std::nullopt;
  const std::optional<Bytes> bytes = from_hex(text.substr(2));
  if (!bytes) return std::nullopt;
  Hash32 out{};
  std::copy(bytes->begin(), bytes->end(), out.begin());
  return out;
}

}  // namespace connector::chain
