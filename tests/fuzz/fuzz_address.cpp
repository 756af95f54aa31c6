// Fuzzes src/chain/address.h: Address::parse, checksummed, lower and is_checksummed, with the
// input both as text and (its first 20 bytes) as an address. Invariants: parse accepts exactly
// "0x" + 40 hex digits; both renderings parse back to the same address; the checksummed form is
// the only spelling is_checksummed accepts and differs from lower() only in letter case.
#include <algorithm>
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "chain/address.h"
#include "fuzz_check.h"

namespace {

using connector::chain::Address;
using connector::chain::is_checksummed;

bool is_hex(std::string_view text) {
  return std::all_of(text.begin(), text.end(),
                     [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; });
}

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

void check_renderings(const Address& address) {
  const std::string sum = address.checksummed();
  const std::string low = address.lower();
  FUZZ_CHECK(sum.size() == 42 && low.size() == 42);
  FUZZ_CHECK(low.starts_with("0x") && is_hex(low.substr(2)) && low == lower(low));
  FUZZ_CHECK(lower(sum) == low);
  FUZZ_CHECK(Address::parse(sum) == address);
  FUZZ_CHECK(Address::parse(low) == address);
  FUZZ_CHECK(is_checksummed(sum));
  // A lower-case spelling is the checksum form only when it has no letter the hash upper-cases.
  FUZZ_CHECK(is_checksummed(low) == (low == sum));
}

void check_text(std::string_view text) {
  const std::optional<Address> parsed = Address::parse(text);
  const bool shape = text.size() == 42 && text.starts_with("0x") && is_hex(text.substr(2));
  FUZZ_CHECK(parsed.has_value() == shape);
  if (!parsed) {
    FUZZ_CHECK(!is_checksummed(text));
    return;
  }
  FUZZ_CHECK(parsed->lower() == lower(text));
  FUZZ_CHECK(is_checksummed(text) == (parsed->checksummed() == text));
  check_renderings(*parsed);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  check_text(std::string_view(reinterpret_cast<const char*>(data), size));
  if (size >= 20) {
    Address::Bytes20 bytes{};
    std::copy(data, data + 20, bytes.begin());
    const Address address(bytes);
    FUZZ_CHECK(address.bytes() == bytes);
    check_renderings(address);
  }
  return 0;
}
