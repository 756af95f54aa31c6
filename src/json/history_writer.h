#pragma once
// JSON shape of a History record.
#include <string_view>

#include "domain/history.h"
#include "json/json_writer.h"

namespace connector::json {

// The record's own status_message, else a fixed sentence for its status.
std::string_view status_message(const domain::HistoryRecord& record);

// with_status_message: the by-hash answer adds status_message after status.
void write_history_record(JsonWriter& w, const domain::HistoryRecord& record,
                          bool with_status_message);

}  // namespace connector::json
