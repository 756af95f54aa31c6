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
  // The parameters named in `known`; every other one is ignored (clients add cache-busters),
  // undecodable ones included, so no error ever repeats a name the endpoint does not know.
  // Throws ApiError: 414 query_too_long above kMaxQueryStringBytes, 400 invalid_parameter for
  // an undecodable value of a known parameter (naming it).
  static QueryParams parse(std::string_view raw, std::span<const std::string_view> known);

  // The value of a parameter the endpoint knows: nullopt when absent or empty (an empty value
  // means the filter is unused); throws ApiError duplicate_parameter when given twice.
  std::optional<std::string_view> get(std::string_view name) const;

  // Throws ApiError duplicate_parameter for the first of `known` given more than once; run
  // before any other check so a duplicate is reported as such.
  void reject_duplicates(std::span<const std::string_view> known) const;

  // The number of known parameters kept.
  std::size_t size() const { return items_.size(); }

 private:
  std::vector<std::pair<std::string, std::string>> items_;
};

// Percent-decodes one component ('+' as space); nullopt on a bad escape, NUL or invalid UTF-8.
std::optional<std::string> decode_component(std::string_view encoded);

// True when text is well-formed UTF-8 (no overlongs, surrogates or code points past U+10FFFF).
bool is_valid_utf8(std::string_view text);

}  // namespace connector::http
