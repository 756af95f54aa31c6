#pragma once
// The query string as application/x-www-form-urlencoded: percent-decoding, '+' as space.
// Decoding is strict (invalid escapes, NUL bytes and invalid UTF-8 are a 400) so nothing
// malformed reaches validation, SQL or JSON.
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace connector::http {

inline constexpr std::size_t kMaxQueryStringBytes = 4096;

class QueryParams {
 public:
  // Throws ApiError: 414 query_too_long above kMaxQueryStringBytes, 400 invalid_parameter for
  // undecodable input (naming the parameter when its name decodes).
  static QueryParams parse(std::string_view raw);

  // The value of a parameter the endpoint knows: nullopt when absent or empty (an empty value
  // means the filter is unused); throws ApiError duplicate_parameter when given twice.
  std::optional<std::string_view> get(std::string_view name) const;

  // Throws ApiError duplicate_parameter for the first of `known` given more than once; run
  // before any other check so a duplicate is reported as such.
  void reject_duplicates(std::span<const std::string_view> known) const;

  std::size_t size() const { return items_.size(); }

 private:
  std::vector<std::pair<std::string, std::string>> items_;
};

// Percent-decodes one component ('+' as space); nullopt on a bad escape, NUL or invalid UTF-8.
std::optional<std::string> decode_component(std::string_view encoded);

// True when text is well-formed UTF-8 (no overlongs, surrogates or code points past U+10FFFF).
bool is_valid_utf8(std::string_view text);

}  // namespace connector::http
