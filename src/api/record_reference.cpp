#include "api/record_reference.h"

#include <algorithm>

#include "json/history_writer.h"

namespace connector::api {

std::shared_ptr<const domain::ReferenceData> reference_covering(
    db::ReferenceCache& cache, std::chrono::steady_clock::time_point deadline,
    std::shared_ptr<const domain::ReferenceData> data,
    std::span<const domain::HistoryRecord> records) {
  auto covered = [&records](const domain::ReferenceData& reference) {
    return std::all_of(records.begin(), records.end(),
                       [&](const auto& record) { return json::covers(reference, record); });
  };
  // Newer than the snapshot: wait for the refresher's next reloads rather than load it here.
  const auto until = std::min(deadline, std::chrono::steady_clock::now() + cache.newer_wait());
  while (!covered(*data)) {
    auto newer = cache.newer_than(data, until);
    if (newer == data) {
      throw db::DatabaseUnavailable("a history record names reference data not loaded yet");
    }
    data = std::move(newer);
  }
  return data;
}

void write_record_answer(db::ReferenceCache& cache, std::chrono::steady_clock::time_point deadline,
                         const domain::HistoryRecord& record, json::JsonWriter& out) {
  const auto reference = reference_covering(cache, deadline, cache.get(), std::span(&record, 1));
  json::write_history_record(out, record, *reference, /*with_status_message=*/true);
}

}  // namespace connector::api
