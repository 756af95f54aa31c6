#include "chain/amount.h"

#include <stdexcept>

namespace connector::chain {
namespace {

constexpr std::uint64_t kMillion = 1'000'000;
constexpr std::uint64_t kMaxFeePercent = 10'000;  // base 10000: 10000 means 100 %
constexpr std::size_t kFeeFractionDigits = 6;

bool is_digit(char c) { return c >= '0' && c <= '9'; }

bool all_digits(std::string_view text) {
  for (char c : text) {
    if (!is_digit(c)) return false;
  }
  return true;
}

// Splits "digits[.digits]" into its two parts. Both parts must be non-empty digit runs when
// present, so signs, exponents, spaces, "1." and ".5" are all refused.
struct DecimalParts {
  std::string_view whole;
  std::string_view fraction;  // empty when there is no dot
};

std::optional<DecimalParts> split_decimal(std::string_view text) {
  const std::size_t dot = text.find('.');
  DecimalParts parts{text.substr(0, dot), {}};
  if (dot != std::string_view::npos) {
    parts.fraction = text.substr(dot + 1);
    if (parts.fraction.empty()) return std::nullopt;
  }
  if (parts.whole.empty() || !all_digits(parts.whole) || !all_digits(parts.fraction)) {
    return std::nullopt;
  }
  return parts;
}

}  // namespace

std::optional<std::string> canonical_base_units(std::string_view digits) {
  if (digits.empty() || !all_digits(digits)) return std::nullopt;
  const std::size_t first = digits.find_first_not_of('0');
  if (first == std::string_view::npos) return std::string("0");
  const std::string_view trimmed = digits.substr(first);
  // Same length canonical digit strings compare numerically as text.
  if (trimmed.size() > kUint256Max.size() ||
      (trimmed.size() == kUint256Max.size() && trimmed > kUint256Max)) {
    return std::nullopt;
  }
  return std::string(trimmed);
}

// Decimals beyond 18 work too; negative ones are a caller bug, refused loudly rather than
// rendering a wrong amount.
std::string format_units(std::string_view base_units, int decimals) {
  std::string text;
  append_units(text, base_units, decimals);
  return text;
}

// The point moves `decimals` places left: the digits before the last `decimals` are the whole
// part ("0" when there are none), the rest the fraction, left-padded with zeros to `decimals`
// digits, its trailing zeros dropped (and the point with them when nothing is left).
void append_units(std::string& out, std::string_view base_units, int decimals) {
  if (decimals < 0) throw std::out_of_range("append_units: negative decimals");
  const auto places = static_cast<std::size_t>(decimals);
  if (places == 0) {
    out.append(base_units);
    return;
  }
  const bool has_whole = base_units.size() > places;
  if (has_whole) {
    out.append(base_units.substr(0, base_units.size() - places));
  } else {
    out += '0';
  }
  const std::string_view tail =
      has_whole ? base_units.substr(base_units.size() - places) : base_units;
  const std::size_t last = tail.find_last_not_of('0');
  if (last == std::string_view::npos) return;
  out += '.';
  out.append(places - tail.size(), '0');
  out.append(tail.substr(0, last + 1));
}

std::optional<std::string> parse_units(std::string_view text, int decimals) {
  if (decimals < 0) return std::nullopt;
  const std::optional<DecimalParts> parts = split_decimal(text);
  if (!parts) return std::nullopt;
  const auto places = static_cast<std::size_t>(decimals);
  if (parts->fraction.size() > places) return std::nullopt;

  std::string digits(parts->whole);
  digits.append(parts->fraction);
  digits.append(places - parts->fraction.size(), '0');
  return canonical_base_units(digits);
}

std::string format_fee_percent(std::uint64_t millionths) {
  std::string fraction = std::to_string(millionths % kMillion);
  fraction.insert(0, kFeeFractionDigits - fraction.size(), '0');
  return std::to_string(millionths / kMillion) + "." + fraction;
}

std::optional<std::uint64_t> parse_fee_percent(std::string_view text) {
  const std::optional<DecimalParts> parts = split_decimal(text);
  if (!parts || parts->fraction.size() > kFeeFractionDigits) return std::nullopt;

  // Bail out as soon as the whole part passes the cap, so long inputs cannot overflow.
  std::uint64_t whole = 0;
  for (char c : parts->whole) {
    whole = whole * 10 + static_cast<std::uint64_t>(c - '0');
    if (whole > kMaxFeePercent) return std::nullopt;
  }
  std::uint64_t fraction = 0;
  for (std::size_t i = 0; i < kFeeFractionDigits; ++i) {
    const char c = i < parts->fraction.size() ? parts->fraction[i] : '0';
    fraction = fraction * 10 + static_cast<std::uint64_t>(c - '0');
  }
  const std::uint64_t millionths = whole * kMillion + fraction;
  if (millionths > kMaxFeePercent * kMillion) return std::nullopt;
  return millionths;
}

}  // namespace connector::chain
