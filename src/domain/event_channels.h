#pragma once
// The names of the event channels (nginx/connector-events.conf): the publisher publishes a
// record's change on them (events/publisher.h) and the worker sends subscribers to them
// (api/event_stream.h), from validated values only.
//
// A record's channel is "h:" and its hash (64 lower-case hex digits); an address's, "a:" and the
// address in lower case (so its EIP-55 spelling and its lower-case one are one channel).
#include <string>
#include <string_view>
#include <vector>

#include "domain/history.h"

namespace connector::domain {

// Whether every channel of a record can be named: its hash and each address it has hold only
// [0-9a-z] once in lower case. The columns have no such check, and a name with another
// character (a comma splits nchan's channel lists) must never be sent: such a record's changes
// are passed over (events/publisher.h).
bool has_channel_names(const HistoryRecord& record);

std::string record_channel(std::string_view hash);
std::string address_channel(std::string_view address);
// The channels of the addresses a record involves, each once: its deposit address, its
// sender, its destination (an empty one has none).
std::vector<std::string> address_channels(const HistoryRecord& record);
// Where a record's change goes for the streams that came back after an id (Last-Event-ID),
// which start at the oldest message nginx keeps, a moment's worth: "r:" and its hash, then its
// address channels (an address's streams all read those).
std::vector<std::string> recent_channels(const HistoryRecord& record);
// The long-poll channels of a record's change: "p" and its record channel, then "p" and each of
// its address channels. Their messages only wake the polls up (json/change_list.h, kNoChanges):
// the client asks again, and the worker answers from the feed.
std::vector<std::string> poll_channels(const HistoryRecord& record);

}  // namespace connector::domain
