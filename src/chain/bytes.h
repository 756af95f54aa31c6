#pragma once
// Fixed-size byte strings and hex conversion shared by the chain primitives.
#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace connector::chain {

using Hash32 = std::array<std::uint8_t, 32>;
using Bytes = std::vector<std::uint8_t>;

// Lower-case hex, no "0x".
std::string to_hex(std::span<const std::uint8_t> bytes);

// Decodes an even number of hex digits (any case, no "0x"); nullopt on anything else.
std::optional<Bytes> from_hex(std::string_view hex);

// True when every character is a hex digit (an empty string is true).
bool is_hex_digits(std::string_view text);

// The text with A-Z made a-z (hashes and addresses compare and key in lower case).
std::string ascii_lower(std::string_view text);

// Parses "0x" + 64 hex digits (any case) into 32 bytes.
std::optional<Hash32> parse_hash32(std::string_view text);

}  // namespace connector::chain
