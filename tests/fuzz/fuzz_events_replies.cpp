// Fuzzes what the event publisher reads from outside its own memory (src/events/): nchan's
// channel info (messages_in_channel_info, from the nginx on the publisher's socket) and the
// cursor file (parse_cursor_text, from the disk), each with the whole input. Invariants: the
// cursor is exactly 1 to 20 digits and an optional trailing newline, with the value they spell,
// and its written form reads back; the channel info is never read past its byte bound, reads as
// RapidJSON's recursive parser reads it, and an info object built around a number from the
// input reads back that number.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

#include <rapidjson/document.h>

#include "events/cursor_file.h"
#include "events/nchan_info.h"
#include "fuzz_check.h"

namespace {

using connector::events::kMaxChannelInfoBytes;
using connector::events::messages_in_channel_info;
using connector::events::parse_cursor_text;

// The value of 1 to 20 decimal digits, computed here without the code under test; none past
// 64 bits or for anything else.
std::optional<std::uint64_t> digits_value(std::string_view text) {
  if (text.empty() || text.size() > 20) return std::nullopt;
  std::uint64_t value = 0;
  for (const char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    const auto digit = static_cast<std::uint64_t>(c - '0');
    if (value > (UINT64_MAX - digit) / 10) return std::nullopt;
    value = value * 10 + digit;
  }
  return value;
}

// The same reading with RapidJSON's default, recursive parser: within the byte bound a nesting
// is at most ~2000 deep, which the stack holds. The code under test parses iteratively.
std::optional<std::uint64_t> recursive_reading(std::string_view text) {
  if (text.size() > kMaxChannelInfoBytes) return std::nullopt;
  rapidjson::Document info;
  info.Parse(text.data(), text.size());
  if (info.HasParseError() || !info.IsObject()) return std::nullopt;
  // HasMember and operator[]: comparing RapidJSON 1.1's member iterators is ambiguous in C++20.
  if (!info.HasMember("messages") || !info["messages"].IsUint64()) return std::nullopt;
  return info["messages"].GetUint64();
}

void check_cursor(std::string_view text) {
  const auto parsed = parse_cursor_text(text);
  std::string_view digits = text;
  if (digits.ends_with('\n')) digits.remove_suffix(1);
  FUZZ_CHECK(parsed == digits_value(digits));
  if (parsed) FUZZ_CHECK(parse_cursor_text(std::to_string(*parsed) + "\n") == parsed);
}

void check_channel_info(std::string_view text, const std::uint8_t* data, std::size_t size) {
  const auto messages = messages_in_channel_info(text);
  if (text.size() > kMaxChannelInfoBytes) FUZZ_CHECK(!messages);
  FUZZ_CHECK(messages == recursive_reading(text));
  std::uint64_t number = 0;
  std::memcpy(&number, data, size < sizeof number ? size : sizeof number);
  const std::string info = "{\"messages\": " + std::to_string(number) +
                           ", \"requested\": 3, \"subscribers\": 0, \"last_message_id\": \"" +
                           std::to_string(number % 2000000000) + ":0\"}";
  FUZZ_CHECK(messages_in_channel_info(info) == number);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  check_cursor(text);
  check_channel_info(text, data, size);
  return 0;
}
