#pragma once
// History records name their chains and assets by id and are rendered from the in-memory
// reference snapshot; a record newer than the snapshot (its asset imported a moment ago) waits
// for the refresher's next reload (a 503 if that does not cover it either).
#include <chrono>
#include <memory>
#include <span>

#include "api/endpoints.h"
#include "domain/history.h"
#include "json/json_writer.h"

namespace connector::api {

// data, or a newer snapshot of the cache that names every chain and asset of the records,
// waited for until `deadline` at the latest (DatabaseUnavailable past it).
std::shared_ptr<const domain::ReferenceData> reference_covering(
    db::ReferenceCache& cache, std::chrono::steady_clock::time_point deadline,
    std::shared_ptr<const domain::ReferenceData> data,
    std::span<const domain::HistoryRecord> records);

// The body /v1/history/hash answers for the record; also the data of its events
// (src/events/publisher.h), so that both are the same bytes.
void write_record_answer(db::ReferenceCache& cache, std::chrono::steady_clock::time_point deadline,
                         const domain::HistoryRecord& record, json::JsonWriter& out);

}  // namespace connector::api
