#include "http/query_string.h"

#include <algorithm>

#include "http/api_error.h"

namespace connector::http {
namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Length of the UTF-8 sequence starting with lead byte b, 0 if b cannot start one.
int utf8_sequence_length(unsigned char b) {
  if (b < 0x80) return 1;
  if (b >= 0xC2 && b <= 0xDF) return 2;
  if (b >= 0xE0 && b <= 0xEF) return 3;
  if (b >= 0xF0 && b <= 0xF4) return 4;
  return 0;
}

}  // namespace

bool is_valid_utf8(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    const auto lead = static_cast<unsigned char>(text[i]);
    const int length = utf8_sequence_length(lead);
    if (length == 0 || i + length > text.size()) return false;
    for (int k = 1; k < length; ++k) {
      if ((static_cast<unsigned char>(text[i + k]) & 0xC0) != 0x80) return false;
    }
    if (length >= 3) {
      const auto second = static_cast<unsigned char>(text[i + 1]);
      if (lead == 0xE0 && second < 0xA0) return false;  // overlong
      if (lead == 0xED && second > 0x9F) return false;  // surrogate
      if (lead == 0xF0 && second < 0x90) return false;  // overlong
      if (lead == 0xF4 && second > 0x8F) return false;  // past U+10FFFF
    }
    i += length;
  }
  return true;
}

std::optional<std::string> decode_component(std::string_view encoded) {
  std::string out;
  out.reserve(encoded.size());
  for (std::size_t i = 0; i < encoded.size(); ++i) {
    const char c = encoded[i];
    if (c == '+') {
      out.push_back(' ');
    } else if (c == '%') {
      if (i + 2 >= encoded.size()) return std::nullopt;
      const int high = hex_value(encoded[i + 1]);
      const int low = hex_value(encoded[i + 2]);
      if (high < 0 || low < 0) return std::nullopt;
      out.push_back(static_cast<char>(high * 16 + low));
      i += 2;
    } else {
      out.push_back(c);
    }
  }
  if (out.find('\0') != std::string::npos || !is_valid_utf8(out)) return std::nullopt;
  return out;
}

QueryParams QueryParams::parse(std::string_view raw, std::span<const std::string_view> known) {
  if (raw.size() > kMaxQueryStringBytes) {
    throw ApiError(
        414, "query_too_long",
        "The query string is longer than " + std::to_string(kMaxQueryStringBytes) + " bytes");
  }
  QueryParams params;
  while (!raw.empty()) {
    const std::size_t amp = raw.find('&');
    const std::string_view item = raw.substr(0, amp);
    raw = amp == std::string_view::npos ? std::string_view{} : raw.substr(amp + 1);
    if (item.empty()) continue;  // "a=1&&b=2"
    const std::size_t eq = item.find('=');
    auto name = decode_component(item.substr(0, eq));
    // An unknown name, or one that does not even decode, is ignored whatever its value.
    if (!name || std::find(known.begin(), known.end(), *name) == known.end()) continue;
    auto value =
        decode_component(eq == std::string_view::npos ? std::string_view{} : item.substr(eq + 1));
    if (!value) {
      throw invalid_parameter(*name, *name +
                                         " has an invalid percent-escape, a NUL byte or "
                                         "invalid UTF-8");
    }
    params.items_.emplace_back(std::move(*name), std::move(*value));
  }
  return params;
}

void QueryParams::reject_duplicates(std::span<const std::string_view> known) const {
  for (std::string_view name : known) get(name);
}

std::optional<std::string_view> QueryParams::get(std::string_view name) const {
  std::optional<std::string_view> found;
  for (const auto& [key, value] : items_) {
    if (key != name) continue;
    if (found) throw duplicate_parameter(std::string(name));
    found = value;
  }
  if (found && found->empty()) return std::nullopt;
  return found;
}

}  // namespace connector::http
