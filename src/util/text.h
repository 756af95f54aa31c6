#pragma once
// Text helpers the configuration and the worker's environment share.
#include <string_view>

namespace connector::util {

// `s` without the blanks (space, tab, a CRLF file's \r) at either end.
inline std::string_view trim(std::string_view s) {
  constexpr std::string_view kBlanks = " \t\r";
  const auto first = s.find_first_not_of(kBlanks);
  if (first == std::string_view::npos) return {};
  return s.substr(first, s.find_last_not_of(kBlanks) - first + 1);
}

}  // namespace connector::util
