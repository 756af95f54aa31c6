#pragma once
// JSON shape of a History record.
#include <string_view>

#include "domain/history.h"
#include "domain/reference_data.h"
#include "json/json_writer.h"

namespace connector::json {

// The record's own status_message, else a fixed sentence for its status.
std::string_view status_message(const domain::HistoryRecord& record);

// with_status_message: the by-hash answer adds status_message after status.
// Chain and asset fields come from `data`, which must hold the record's chains and assets
// (db::RefreshedReference::covering makes sure); a missing one throws std::logic_error (a 500).
void write_history_record(JsonWriter& w, const domain::HistoryRecord& record,
                          const domain::ReferenceData& data, bool with_status_message);

// The body /v1/history/hash answers for the record; also the data of its events and of the
// long-polls' changes (api/event_stream.cpp, events/publisher.cpp), so all are the same bytes.
void write_record_answer(JsonWriter& w, const domain::HistoryRecord& record,
                         const domain::ReferenceData& data);

}  // namespace connector::json
