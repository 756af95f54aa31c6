#pragma once
// 20-byte EVM addresses, written "0x" + 40 hex digits, rendered in EIP-55 checksum form.
#include <array>
#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace connector::chain {

class Address {
 public:
  using Bytes20 = std::array<std::uint8_t, 20>;

  explicit Address(const Bytes20& bytes) : bytes_(bytes) {}

  // Accepts "0x" + 40 hex digits in any case; nullopt otherwise.
  static std::optional<Address> parse(std::string_view text);

  const Bytes20& bytes() const { return bytes_; }
  std::string checksummed() const;  // EIP-55
  std::string lower() const;        // "0x" + 40 lower-case hex digits

  auto operator<=>(const Address&) const = default;

 private:
  Bytes20 bytes_;
};

// True when text is exactly the EIP-55 form of a valid address.
bool is_checksummed(std::string_view text);

}  // namespace connector::chain
