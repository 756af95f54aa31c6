#include "json/object_text.h"

#include <charconv>
#include <cstring>

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

// Whether any of the 8 bytes in `word` needs an escape: a control character (< 0x20), '"' or
// '\\'. Bit tricks on whole words (bytes of 0x80 and above never match), so that the clean
// strings of a history record (hex, digits, names) are checked 8 bytes at a time.
bool needs_escape(std::uint64_t word) {
  constexpr std::uint64_t kOnes = 0x0101010101010101u;
  constexpr std::uint64_t kHighs = 0x8080808080808080u;
  const auto has_zero = [](std::uint64_t v) { return (v - kOnes) & ~v & kHighs; };
  const std::uint64_t below_space = (word - kOnes * 0x20) & ~word & kHighs;
  return (below_space | has_zero(word ^ (kOnes * '"')) | has_zero(word ^ (kOnes * '\\'))) != 0;
}

bool is_clean(std::string_view value) {
  std::size_t i = 0;
  for (; i + 8 <= value.size(); i += 8) {
    std::uint64_t word;
    std::memcpy(&word, value.data() + i, 8);
    if (needs_escape(word)) return false;
  }
  for (; i < value.size(); ++i) {
    if (kEscape[static_cast<unsigned char>(value[i])] != 0) return false;
  }
  return true;
}

template <typename T>
void append_number(std::string& out, T value) {
  char digits[24];
  const auto end = std::to_chars(digits, digits + sizeof digits, value).ptr;
  out.append(digits, end);
}

}  // namespace

void append_string(std::string& out, std::string_view value) {
  out += '"';
  if (is_clean(value)) {
    out.append(value);
    out += '"';
    return;
  }
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

char* ObjectText::extend(std::size_t n) {
  const std::size_t at = out_.size();
  out_.resize(at + n);
  return out_.data() + at;
}

// Keys are this program's own identifiers: nothing in them to escape. Written with one resize
// rather than four appends: a page of 20 records writes about 700 names.
void ObjectText::name(std::string_view key) {
  char* p = extend(key.size() + (first_ ? 3 : 4));
  if (!first_) *p++ = ',';
  first_ = false;
  *p++ = '"';
  std::memcpy(p, key.data(), key.size());
  p += key.size();
  *p++ = '"';
  *p = ':';
}

void ObjectText::string(std::string_view key, std::string_view value) {
  if (!is_clean(value)) {
    name(key);
    append_string(out_, value);
    return;
  }
  // The usual case, name and value in one go: "key":"value".
  char* p = extend(key.size() + value.size() + (first_ ? 5 : 6));
  if (!first_) *p++ = ',';
  first_ = false;
  *p++ = '"';
  std::memcpy(p, key.data(), key.size());
  p += key.size();
  *p++ = '"';
  *p++ = ':';
  *p++ = '"';
  std::memcpy(p, value.data(), value.size());
  p += value.size();
  *p = '"';
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
