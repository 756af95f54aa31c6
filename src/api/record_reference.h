#pragma once
// History records name their chains and assets by id and are rendered from the in-memory
// reference snapshot; a record newer than the snapshot (its asset imported a moment ago) waits
// for the refresher's next reload (a 503 if that does not cover it either).
#include <memory>
#include <span>

#include "api/endpoints.h"
#include "domain/history.h"

namespace connector::api {

std::shared_ptr<const domain::ReferenceData> reference_covering(
    Services& services, std::shared_ptr<const domain::ReferenceData> data,
    std::span<const domain::HistoryRecord> records);

}  // namespace connector::api
