#include "api/record_reference.h"

#include <algorithm>

#include "json/history_writer.h"

namespace connector::api {

std::shared_ptr<const domain::ReferenceData> reference_covering(
    Services& services, std::shared_ptr<const domain::ReferenceData> data,
    std::span<const domain::HistoryRecord> records) {
  const bool covered = std::all_of(records.begin(), records.end(),
                                   [&](const auto& record) { return json::covers(*data, record); });
  return covered ? data : services.reference.refresh(services.db);
}

}  // namespace connector::api
