#pragma once
// Loads the reference data (chains, assets, connects, pairs) and keeps a shared snapshot of it
// that is refreshed on a short interval, so validation and the reference endpoints need no
// query per request.
#include <chrono>
#include <memory>

#include "db/database.h"
#include "db/snapshot.h"
#include "domain/reference_data.h"

namespace connector::db {

domain::ReferenceData load_reference_data(Database& db);

// The reference data of this process's threads, reloaded when older than the refresh interval.
// A failed reload keeps serving the previous snapshot for as long as reloads fail (the data
// changes rarely, and networks, connects and pairs keep answering while the database is away).
class ReferenceCache {
 public:
  explicit ReferenceCache(std::chrono::milliseconds refresh_interval)
      : snapshot_("reference data", refresh_interval) {}

  // The current snapshot, reloaded through db when due; with none yet, a failure propagates.
  std::shared_ptr<const domain::ReferenceData> get(Database& db);

  // Reloads now, whatever the snapshot's age: for data newer than the snapshot (a record naming
  // an asset imported a moment ago).
  std::shared_ptr<const domain::ReferenceData> refresh(Database& db);

 private:
  Snapshot<domain::ReferenceData> snapshot_;
};

}  // namespace connector::db
