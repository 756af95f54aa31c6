#pragma once
// Exact amounts. An amount is an unsigned integer of base units up to 2^256-1, carried as its
// canonical decimal digits (no leading zeros, "0" for zero) so no floating point ever touches
// it; rendering in whole units only moves the decimal point.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace connector::chain {

inline constexpr std::string_view kUint256Max =
    "115792089237316195423570985008687907853269984665640564039457584007913129639935";

// Digits only (leading zeros allowed), at most 2^256-1 -> canonical digits; nullopt otherwise.
std::optional<std::string> canonical_base_units(std::string_view digits);

// Base units -> whole units with `decimals` (0-18) fraction digits: plain decimal, no exponent,
// no trailing zeros, no trailing dot, "0" for zero. ("88450000000000000000", 18) -> "88.45".
// `base_units` must be canonical.
std::string format_units(std::string_view base_units, int decimals);
// The same text appended to `out`, with no allocation of its own (a history page renders three
// amounts per record).
void append_units(std::string& out, std::string_view base_units, int decimals);

// Whole units as printed by format_units (also accepts trailing zeros and leading zeros) ->
// canonical base units. nullopt for signs, exponents, empty parts, more fraction digits than
// `decimals`, or a result above 2^256-1.
std::optional<std::string> parse_units(std::string_view text, int decimals);

// Fee percent, base 10000 ("30.000000" = 30/10000 = 0.3 %), held exactly as millionths.
std::string format_fee_percent(std::uint64_t millionths);  // 30000000 -> "30.000000"
// "30", "30.5", "30.000000" -> millionths; at most 6 fraction digits, at most 10000.
std::optional<std::uint64_t> parse_fee_percent(std::string_view text);

}  // namespace connector::chain
