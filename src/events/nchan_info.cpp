#include "events/nchan_info.h"

#include <rapidjson/document.h>

namespace connector::events {

std::optional<std::uint64_t> messages_in_channel_info(std::string_view text) {
  if (text.size() > kMaxChannelInfoBytes) return std::nullopt;
  rapidjson::Document info;
  // Iterative: a nesting of any depth costs heap within the byte bound, never the stack.
  info.Parse<rapidjson::kParseIterativeFlag>(text.data(), text.size());
  if (info.HasParseError() || !info.IsObject()) return std::nullopt;
  // HasMember and operator[]: comparing RapidJSON 1.1's member iterators is ambiguous in C++20.
  if (!info.HasMember("messages") || !info["messages"].IsUint64()) return std::nullopt;
  return info["messages"].GetUint64();
}

}  // namespace connector::events
