#include "domain/event_channels.h"

#include <algorithm>

#include "chain/bytes.h"

namespace connector::domain {

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
