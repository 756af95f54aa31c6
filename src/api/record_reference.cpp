#include "api/record_reference.h"

#include <algorithm>

#include "json/history_writer.h"

namespace connector::api {

std::shared_ptr<const domain::ReferenceData> reference_covering(
    Services& services, std::shared_ptr<const domain::ReferenceData> data,
    std::span<const domain::HistoryRecord> records) {
  auto covered = [&records](const domain::ReferenceData& reference) {
    return std::all_of(records.begin(), records.end(),
                       [&](const auto& record) { return json::covers(reference, record); });
  };
  // Newer than the snapshot: wait for the refresher's next reloads rather than load it here.
  const auto until = std::min(services.deadline,
                              std::chrono::steady_clock::now() + services.reference.newer_wait());
  while (!covered(*data)) {
    auto newer = services.reference.newer_than(data, until);
    if (newer == data) {
      throw db::DatabaseUnavailable("a history record names reference data not loaded yet");
    }
    data = std::move(newer);
  }
  return data;
}

}  // namespace connector::api
