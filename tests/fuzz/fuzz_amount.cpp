// Fuzzes src/chain/amount.h. The first input byte picks the decimals (0-39: past the 18 of real
// assets too), the rest is the text. Invariants: canonical_base_units and parse_units accept
// exactly what a plain reference check accepts and give canonical digits at most 2^256-1;
// format_units gives the shortest plain decimal and parse_units(format_units(x, d), d) == x; the
// fee percent parses back from its rendering, and refuses above 10000.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

#include "chain/amount.h"
#include "fuzz_check.h"

namespace {

namespace chain = connector::chain;

bool is_digits(std::string_view text) {
  return !text.empty() &&
         std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::string_view strip_leading_zeros(std::string_view digits) {
  const std::size_t first = digits.find_first_not_of('0');
  return first == std::string_view::npos ? std::string_view("0") : digits.substr(first);
}

bool is_canonical(std::string_view digits) {
  if (!is_digits(digits) || strip_leading_zeros(digits) != digits) return false;
  return digits.size() < chain::kUint256Max.size() ||
         (digits.size() == chain::kUint256Max.size() && digits <= chain::kUint256Max);
}

// "whole[.fraction]" with no leading zeros (but one) and no trailing fraction zeros or dot.
bool is_shortest_decimal(std::string_view text) {
  const std::size_t dot = text.find('.');
  const std::string_view whole = text.substr(0, dot);
  if (!is_digits(whole) || strip_leading_zeros(whole) != whole) return false;
  if (dot == std::string_view::npos) return true;
  const std::string_view fraction = text.substr(dot + 1);
  return is_digits(fraction) && fraction.back() != '0';
}

// The reference reading of "digits[.digits]": the digits without the point, padded to
// `decimals` fraction digits; nullopt for any other shape or too many fraction digits.
std::optional<std::string> reference_scaled(std::string_view text, std::size_t decimals) {
  const std::size_t dot = text.find('.');
  const std::string_view whole = text.substr(0, dot);
  const std::string_view fraction =
      dot == std::string_view::npos ? std::string_view{} : text.substr(dot + 1);
  if (!is_digits(whole)) return std::nullopt;
  if (dot != std::string_view::npos && !is_digits(fraction)) return std::nullopt;
  if (fraction.size() > decimals) return std::nullopt;
  std::string digits(whole);
  digits.append(fraction);
  digits.append(decimals - fraction.size(), '0');
  return std::string(strip_leading_zeros(digits));
}

void check_format(const std::string& base_units, int decimals) {
  const std::string text = chain::format_units(base_units, decimals);
  FUZZ_CHECK(is_shortest_decimal(text));
  FUZZ_CHECK(chain::parse_units(text, decimals) == base_units);
  if (decimals == 0) FUZZ_CHECK(text == base_units);
}

void check_amounts(std::string_view text, int decimals) {
  const std::optional<std::string> canonical = chain::canonical_base_units(text);
  FUZZ_CHECK(canonical.has_value() == (is_digits(text) && is_canonical(strip_leading_zeros(text))));
  if (canonical) {
    FUZZ_CHECK(*canonical == strip_leading_zeros(text));
    FUZZ_CHECK(chain::canonical_base_units(*canonical) == canonical);
    check_format(*canonical, decimals);
  }

  const std::optional<std::string> parsed = chain::parse_units(text, decimals);
  const auto expected = reference_scaled(text, static_cast<std::size_t>(decimals));
  FUZZ_CHECK(parsed.has_value() == (expected && is_canonical(*expected)));
  if (parsed) {
    FUZZ_CHECK(*parsed == *expected);
    check_format(*parsed, decimals);
  }
}

void check_fee_percent(std::string_view text) {
  constexpr std::uint64_t kMax = 10'000'000'000;  // 10000 in millionths
  const std::optional<std::uint64_t> parsed = chain::parse_fee_percent(text);
  const auto expected = reference_scaled(text, 6);
  const bool in_range =
      expected && (expected->size() < 11 || (expected->size() == 11 && *expected <= "10000000000"));
  FUZZ_CHECK(parsed.has_value() == in_range);
  if (!parsed) return;
  FUZZ_CHECK(*parsed <= kMax && std::to_string(*parsed) == *expected);
  const std::string rendered = chain::format_fee_percent(*parsed);
  FUZZ_CHECK(rendered.size() >= 8 && rendered[rendered.size() - 7] == '.');
  FUZZ_CHECK(chain::parse_fee_percent(rendered) == parsed);
}

void check_fee_rendering(std::uint64_t millionths) {
  const std::string rendered = chain::format_fee_percent(millionths);
  const std::optional<std::uint64_t> back = chain::parse_fee_percent(rendered);
  if (millionths <= 10'000'000'000) {
    FUZZ_CHECK(back == millionths);
  } else {
    FUZZ_CHECK(!back);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const int decimals = data[0] % 40;
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  check_amounts(text, decimals);
  check_fee_percent(text);
  if (text.size() >= 8) {
    std::uint64_t millionths = 0;
    std::memcpy(&millionths, text.data(), sizeof millionths);
    check_fee_rendering(millionths);
  }
  return 0;
}
