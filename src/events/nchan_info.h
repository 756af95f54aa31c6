#pragma once
// nchan's answer about a channel (GET on a publisher location with Accept: application/json,
// e.g. {"messages": 1, "requested": 3, "subscribers": 0, "last_message_id": "1700000000:0"}),
// read for its one number. The bytes come from the nginx on the publisher's private socket; they
// are still bounded here before RapidJSON sees them (tests/fuzz/fuzz_events_replies.cpp).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace connector::events {

// nchan's channel info is about 100 bytes; a longer answer is not one.
inline constexpr std::size_t kMaxChannelInfoBytes = 4096;

// The "messages" member of a channel info object; none when the text is longer than
// kMaxChannelInfoBytes, is not a JSON object, or has no such unsigned integer member.
std::optional<std::uint64_t> messages_in_channel_info(std::string_view text);

}  // namespace connector::events
