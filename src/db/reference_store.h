#pragma once
// Loads the reference data (chains, assets, connects, pairs) and keeps a shared snapshot of it
// that is refreshed on a short interval, so validation and the reference endpoints need no
// query per request.
#include <chrono>
#include <memory>
#include <mutex>

#include "db/database.h"
#include "domain/reference_data.h"

namespace connector::db {

domain::ReferenceData load_reference_data(Database& db);

class ReferenceCache {
 public:
  explicit ReferenceCache(std::chrono::milliseconds refresh_interval)
      : refresh_interval_(refresh_interval) {}

  // The current snapshot, reloaded through db when older than the refresh interval. When a
  // reload fails the previous snapshot keeps serving; with none yet, the failure propagates.
  std::shared_ptr<const domain::ReferenceData> get(Database& db);

  // Reloads now, whatever the snapshot's age: for data newer than the snapshot (a record naming
  // an asset imported a moment ago).
  std::shared_ptr<const domain::ReferenceData> refresh(Database& db);

 private:
  using Clock = std::chrono::steady_clock;

  std::shared_ptr<const domain::ReferenceData> store(domain::ReferenceData loaded);

  const std::chrono::milliseconds refresh_interval_;
  std::mutex mutex_;
  std::shared_ptr<const domain::ReferenceData> snapshot_;
  Clock::time_point loaded_at_{};
  bool loading_ = false;  // one thread reloads while the others keep serving the old snapshot
};

}  // namespace connector::db
