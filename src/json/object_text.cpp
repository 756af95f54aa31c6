#include "json/object_text.h"

#include <charconv>

namespace connector::json {
namespace {

// What follows the backslash for each byte that needs one (0: written as is), as in
// rapidjson::Writer::WriteString.
constexpr char kEscape[256] = {
    'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'b', 't', 'n', 'u', 'f',  'r', 'u', 'u',
    'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u',  'u', 'u', 'u',
    0,   0,   '"', 0,   0,   0,   0,   0,   0,   0,   0,   0,   0,    0,   0,   0,
    0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,    0,   0,   0,
    0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,    0,   0,   0,
    0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   '\\', 0,   0,   0,
};

template <typename T>
void append_number(std::string& out, T value) {
  char digits[24];
  const auto end = std::to_chars(digits, digits + sizeof digits, value).ptr;
  out.append(digits, end);
}

}  // namespace

void append_string(std::string& out, std::string_view value) {
  out += '"';
  std::size_t clean_from = 0;
  for (std::size_t i = 0; i < value.size(); ++i) {
    const char escape = kEscape[static_cast<unsigned char>(value[i])];
    if (escape == 0) continue;
    out.append(value.data() + clean_from, i - clean_from);
    out += '\\';
    out += escape;
    if (escape == 'u') {
      static constexpr char kHex[] = "0123456789ABCDEF";
      const auto c = static_cast<unsigned char>(value[i]);
      out += "00";
      out += kHex[c >> 4];
      out += kHex[c & 0xF];
    }
    clean_from = i + 1;
  }
  out.append(value.data() + clean_from, value.size() - clean_from);
  out += '"';
}

void ObjectText::name(std::string_view key) {
  if (!first_) out_ += ',';
  first_ = false;
  append_string(out_, key);
  out_ += ':';
}

void ObjectText::number(std::string_view key, std::uint64_t value) {
  name(key);
  append_number(out_, value);
}

void ObjectText::number(std::string_view key, std::int64_t value) {
  name(key);
  append_number(out_, value);
}

void ObjectText::number_as_string(std::string_view key, std::uint64_t value) {
  name(key);
  out_ += '"';
  append_number(out_, value);
  out_ += '"';
}

}  // namespace connector::json
