#include "chain/address.h"

#include <algorithm>

#include "chain/bytes.h"
#include "chain/keccak.h"

namespace connector::chain {

std::optional<Address> Address::parse(std::string_view text) {
  // Only a lower-case "0x": that is how every EVM tool writes it.
  if (text.size() != 42 || !text.starts_with("0x")) return std::nullopt;
  const std::optional<Bytes> bytes = from_hex(text.substr(2));
  if (!bytes) return std::nullopt;
  Bytes20 out{};
  std::copy(bytes->begin(), bytes->end(), out.begin());
  return Address(out);
}

std::string Address::lower() const { return "0x" + to_hex(bytes_); }

std::string Address::checksummed() const {
  // EIP-55: hash the lower-case hex text (ASCII, no "0x"); a letter is upper-cased when the
  // matching nibble of the hash is 8 or more.
  std::string hex = to_hex(bytes_);
  const Hash32 hash = keccak256(std::string_view(hex));
  for (std::size_t i = 0; i < hex.size(); ++i) {
    const std::uint8_t nibble = (i % 2 == 0) ? hash[i / 2] >> 4 : hash[i / 2] & 0x0f;
    if (nibble >= 8 && hex[i] >= 'a' && hex[i] <= 'f')
      hex[i] = static_cast<char>(hex[i] - 'a' + 'A');
  }
  return "0x" + hex;
}

bool is_checksummed(std::string_view text) {
  const std::optional<Address> address = Address::parse(text);
  return address && address->checksummed() == text;
}

}  // namespace connector::chain
