// Fuzzes the query-string parser: QueryParams::parse, decode_component and is_valid_utf8.
// Invariants: is_valid_utf8 agrees with a decoder written from the UTF-8 definition; a decoded
// component is valid UTF-8 without NUL and re-encodes to itself; parse either throws the
// documented ApiError or yields exactly the parameters a plain split of the input gives.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fuzz_check.h"
#include "http/api_error.h"
#include "http/query_string.h"

namespace {

using connector::http::ApiError;
using connector::http::decode_component;
using connector::http::is_valid_utf8;
using connector::http::QueryParams;

// UTF-8 by the definition: decode each code point, refuse overlongs, surrogates, > U+10FFFF.
bool reference_is_valid_utf8(std::string_view text) {
  constexpr std::uint32_t kSmallest[4] = {0, 0x80, 0x800, 0x10000};
  for (std::size_t i = 0; i < text.size();) {
    const auto lead = static_cast<unsigned char>(text[i]);
    std::size_t more = 0;
    std::uint32_t code = 0;
    if (lead < 0x80) {
      code = lead;
    } else if ((lead & 0xE0) == 0xC0) {
      more = 1;
      code = lead & 0x1F;
    } else if ((lead & 0xF0) == 0xE0) {
      more = 2;
      code = lead & 0x0F;
    } else if ((lead & 0xF8) == 0xF0) {
      more = 3;
      code = lead & 0x07;
    } else {
      return false;
    }
    for (std::size_t k = 1; k <= more; ++k) {
      if (i + k >= text.size()) return false;
      const auto next = static_cast<unsigned char>(text[i + k]);
      if ((next & 0xC0) != 0x80) return false;
      code = (code << 6) | (next & 0x3F);
    }
    if (code < kSmallest[more] || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) {
      return false;
    }
    i += more + 1;
  }
  return true;
}

std::string percent_encode_all(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (const char c : text) {
    const auto b = static_cast<unsigned char>(c);
    out += '%';
    out += kHex[b >> 4];
    out += kHex[b & 0x0F];
  }
  return out;
}

void check_decode(std::string_view raw) {
  const std::optional<std::string> decoded = decode_component(raw);
  if (!decoded) return;
  FUZZ_CHECK(decoded->find('\0') == std::string::npos);
  FUZZ_CHECK(reference_is_valid_utf8(*decoded));
  FUZZ_CHECK(decoded->size() <= raw.size());
  FUZZ_CHECK(decode_component(percent_encode_all(*decoded)) == decoded);
  if (raw.find_first_of("%+") == std::string_view::npos) FUZZ_CHECK(*decoded == raw);
}

// The names the parsed query knows in this target: a few the fuzzer finds in its dictionary.
constexpr std::string_view kKnown[] = {"page_size", "status", "a", "b"};

bool is_known(const std::string& name) {
  return std::find(std::begin(kKnown), std::end(kKnown), name) != std::end(kKnown);
}

// The items of a query string with a known name, split the plain way: '&' between items, the
// first '=' between name and value, empty items and unknown (or undecodable) names skipped;
// nullopt when the value of a known one does not decode.
std::optional<std::vector<std::pair<std::string, std::string>>> split_items(std::string_view raw) {
  std::vector<std::pair<std::string, std::string>> items;
  std::size_t start = 0;
  while (start <= raw.size()) {
    const std::size_t amp = std::min(raw.find('&', start), raw.size());
    const std::string_view item = raw.substr(start, amp - start);
    start = amp + 1;
    if (item.empty()) continue;
    const std::size_t eq = item.find('=');
    const auto name = decode_component(item.substr(0, eq));
    if (!name || !is_known(*name)) continue;
    const auto value =
        decode_component(eq == std::string_view::npos ? std::string_view{} : item.substr(eq + 1));
    if (!value) return std::nullopt;
    items.emplace_back(*name, *value);
  }
  return items;
}

// What get(name) must answer: the one non-empty value, nullopt, or a duplicate_parameter error.
void check_get(const QueryParams& params,
               const std::vector<std::pair<std::string, std::string>>& items,
               const std::string& name) {
  std::size_t count = 0;
  std::string value;
  for (const auto& [n, v] : items) {
    if (n != name) continue;
    ++count;
    value = v;
  }
  try {
    const std::optional<std::string_view> got = params.get(name);
    FUZZ_CHECK(count <= 1);
    if (count == 0 || value.empty()) {
      FUZZ_CHECK(!got);
    } else {
      FUZZ_CHECK(got && *got == value);
    }
  } catch (const ApiError& e) {
    FUZZ_CHECK(count > 1);
    FUZZ_CHECK(e.status() == 400 && e.code() == "duplicate_parameter" && e.param() == name);
  }
}

void check_parse(std::string_view raw) {
  const auto items = split_items(raw);
  std::optional<QueryParams> params;
  try {
    params = QueryParams::parse(raw, kKnown);
  } catch (const ApiError& e) {
    if (raw.size() > connector::http::kMaxQueryStringBytes) {
      FUZZ_CHECK(e.status() == 414 && e.code() == "query_too_long");
    } else {
      FUZZ_CHECK(!items);
      FUZZ_CHECK(e.status() == 400 && e.code() == "invalid_parameter" && is_known(e.param()));
    }
    return;
  }
  FUZZ_CHECK(raw.size() <= connector::http::kMaxQueryStringBytes);
  FUZZ_CHECK(items && params->size() == items->size());
  for (const auto& item : *items) check_get(*params, *items, item.first);
  check_get(*params, *items, "page_size");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view raw(reinterpret_cast<const char*>(data), size);
  FUZZ_CHECK(is_valid_utf8(raw) == reference_is_valid_utf8(raw));
  check_decode(raw);
  check_parse(raw);
  return 0;
}
