#include "domain/event_channels.h"

#include <algorithm>
#include <cctype>

namespace connector::domain {
namespace {

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

}  // namespace

std::string record_channel(std::string_view hash) { return "h:" + lower(hash); }

std::string address_channel(std::string_view address) { return "a:" + lower(address); }

std::vector<std::string> address_channels(const HistoryRecord& record) {
  std::vector<std::string> channels;
  for (const auto* address :
       {&record.source_deposit_address, &record.source_sender, &record.destination_address}) {
    auto channel = address_channel(*address);
    if (std::find(channels.begin(), channels.end(), channel) == channels.end()) {
      channels.push_back(std::move(channel));
    }
  }
  return channels;
}

}  // namespace connector::domain
