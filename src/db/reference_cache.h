#pragma once
// Loads the reference data (chains, assets, connects, pairs) and keeps a shared snapshot of it
// that is refreshed on a short interval, so validation and the reference endpoints need no
// query per request.
#include <chrono>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "db/connection.h"
#include "db/snapshot.h"
#include "domain/history.h"
#include "domain/reference_data.h"

namespace connector::db {

domain::ReferenceData load_reference_data(Connection& db);
// The statements it runs, a table each (db/statement_set.h).
std::vector<std::string> reference_statements();

// The reference data of this process's threads. The snapshot refresher reloads it on its
// interval; a failed reload keeps serving the previous snapshot for as long as reloads fail (the
// data changes rarely, and networks, connects and pairs keep answering while the database is
// away).
class ReferenceCache {
 public:
  explicit ReferenceCache(std::chrono::milliseconds refresh_interval)
      : refresh_interval_(refresh_interval), snapshot_("reference data") {}

  // The current snapshot; DatabaseUnavailable before the first load.
  std::shared_ptr<const domain::ReferenceData> get() const { return snapshot_.get(); }

  // Loads it now through db: the refresher's reload. Returns when it was stored.
  std::chrono::steady_clock::time_point load(Connection& db);
  // Replaces it with data loaded elsewhere (tests fill it in memory).
  void store(domain::ReferenceData data) { snapshot_.store(std::move(data)); }

  // A snapshot newer than `seen` (the same one if none came by `until`), for data newer than
  // it (a record naming an asset imported a moment ago): the refresher's next reload, so such
  // records cost no reload of their own.
  std::shared_ptr<const domain::ReferenceData> newer_than(
      const std::shared_ptr<const domain::ReferenceData>& seen,
      std::chrono::steady_clock::time_point until) {
    return snapshot_.newer_than(seen, until);
  }
  // `data`, or a newer snapshot that names every chain and asset of the records, waited for
  // until `deadline` at the latest (DatabaseUnavailable past it). History records are rendered
  // from it; a record newer than the snapshot (its asset imported a moment ago) waits for the
  // refresher's next reload rather than loading one of its own.
  std::shared_ptr<const domain::ReferenceData> covering(
      std::shared_ptr<const domain::ReferenceData> data,
      std::span<const domain::HistoryRecord> records,
      std::chrono::steady_clock::time_point deadline);
  // The same from the current snapshot, for one record.
  std::shared_ptr<const domain::ReferenceData> covering(
      const domain::HistoryRecord& record, std::chrono::steady_clock::time_point deadline) {
    return covering(get(), std::span(&record, 1), deadline);
  }
  // How long a request waits for newer reference data: two refresh intervals.
  std::chrono::milliseconds newer_wait() const { return 2 * refresh_interval_; }

 private:
  const std::chrono::milliseconds refresh_interval_;
  Snapshot<domain::ReferenceData> snapshot_;
};

}  // namespace connector::db
