#pragma once
// connector-admin gen-history: loads N generated history records fast, for benchmarks and
// scale tests. Rows go in 500 per statement, one transaction per 10,000, with the per-row
// counter triggers skipped (@connector_bulk_load) and history_counts rebuilt once at the end.
// Meant for an otherwise idle database: records written by others during the load would be
// missing from the rebuilt counters until their own triggers ran.
#include <cstdint>
#include <iosfwd>

#include "db/connection.h"

namespace connector::admin {

struct BulkHistoryOptions {
  std::uint64_t count = 0;
  std::uint64_t seed = 1;
  std::uint64_t recipients = 0;  // distinct recipients; 0: count / 8 (about 8 records each)
};

// Appends the records after the highest id present; returns the first new id.
std::uint64_t generate_history(db::Connection& db, const BulkHistoryOptions& options,
                               std::ostream* progress);

}  // namespace connector::admin
