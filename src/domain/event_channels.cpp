#include "domain/event_channels.h"

#include <algorithm>

#include "chain/bytes.h"

namespace connector::domain {

namespace {

bool names_a_channel(std::string_view key) {
  return std::all_of(key.begin(), key.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
  });
}

}  // namespace

bool has_channel_names(const HistoryRecord& record) {
  return !record.hash.empty() && names_a_channel(record.hash) &&
         names_a_channel(record.source_deposit_address) && names_a_channel(record.source_sender) &&
         names_a_channel(record.destination_address);
}

std::string record_channel(std::string_view hash) { return "h:" + chain::ascii_lower(hash); }

std::string address_channel(std::string_view address) { return "a:" + chain::ascii_lower(address); }

std::vector<std::string> address_channels(const HistoryRecord& record) {
  std::vector<std::string> channels;
  for (const auto* address :
       {&record.source_deposit_address, &record.source_sender, &record.destination_address}) {
    if (address->empty()) continue;  // not recorded (yet): no channel
    auto channel = address_channel(*address);
    if (std::find(channels.begin(), channels.end(), channel) == channels.end()) {
      channels.push_back(std::move(channel));
    }
  }
  return channels;
}

std::vector<std::string> recent_channels(const HistoryRecord& record) {
  std::vector<std::string> channels{"r:" + chain::ascii_lower(record.hash)};
  for (auto& channel : address_channels(record)) channels.push_back(std::move(channel));
  return channels;
}

std::vector<std::string> poll_channels(const HistoryRecord& record) {
  std::vector<std::string> channels{"p" + record_channel(record.hash)};
  for (const auto& channel : address_channels(record)) channels.push_back("p" + channel);
  return channels;
}

}  // namespace connector::domain
