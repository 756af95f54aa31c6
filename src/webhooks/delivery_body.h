#pragma once
// What a delivery carries (docs/webhooks.md, "What is sent"): the body, one line of JSON with
// its members in this order,
//   {"event":"transfer.confirmed","seq":123,"subscription":7,"attempt":1,"record":{...}}
// where record is the document GET /v1/history/hash answers for the record as the change left
// it, and the event id a receiver deduplicates on: the same for every attempt of a change.
#include <cstdint>
#include <string>

#include "domain/history.h"
#include "domain/reference_data.h"

namespace connector::webhooks {

// "transfer." and the status in lower case: transfer.deposit, .pending, .confirmed, .error.
std::string event_type(domain::HistoryStatus status);

// "<subscription>-<seq>" (Connector-Event-Id).
std::string event_id(std::uint64_t subscription, std::uint64_t seq);

std::string delivery_body(const domain::HistoryRecord& record, std::uint64_t seq,
                          std::uint64_t subscription, std::uint32_t attempt,
                          const domain::ReferenceData& reference);

}  // namespace connector::webhooks
