#pragma once
// Loads the reference data (chains, assets, connects, pairs) and keeps a refreshed copy of it
// (db/refreshed.h), reloaded on a short interval, so validation and the reference endpoints
// need no query per request.
#include <chrono>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "db/connection.h"
#include "db/refreshed.h"
#include "domain/history.h"
#include "domain/reference_data.h"

namespace connector::db {

domain::ReferenceData load_reference_data(Connection& db);
// The statements it runs, a table each (db/statement_set.h).
std::vector<std::string> reference_statements();

// The reference data of this process's threads. The refresher reloads it on its interval; a
// failed reload keeps serving the previous copy for as long as reloads fail (the
// data changes rarely, and networks, connects and pairs keep answering while the database is
// away).
class RefreshedReference {
 public:
  explicit RefreshedReference(std::chrono::milliseconds refresh_interval)
      : refresh_interval_(refresh_interval), data_("reference data") {}

  // The current copy; DatabaseUnavailable before the first load.
  std::shared_ptr<const domain::ReferenceData> get() const { return data_.get(); }

  // Loads it now through db: the refresher's reload. Returns when it was stored.
  std::chrono::steady_clock::time_point load(Connection& db);
  // Replaces it with data loaded elsewhere (tests fill it in memory).
  void store(domain::ReferenceData data) { data_.store(std::move(data)); }

  // A copy newer than `seen` (the same one if none came by `until`), for data newer than
  // it (a record naming an asset imported a moment ago): the refresher's next reload, so such
  // records cost no reload of their own.
  std::shared_ptr<const domain::ReferenceData> newer_than(
      const std::shared_ptr<const domain::ReferenceData>& seen,
      std::chrono::steady_clock::time_point until) {
    return data_.newer_than(seen, until);
  }
  // `data`, or a newer copy that names every chain and asset of the records, waited for
  // until `deadline` at the latest (DatabaseUnavailable past it). History records are rendered
  // from it; a record newer than the copy (its asset imported a moment ago) waits for the
  // refresher's next reload rather than loading one of its own.
  std::shared_ptr<const domain::ReferenceData> covering(
      std::shared_ptr<const domain::ReferenceData> data,
      std::span<const domain::HistoryRecord> records,
      std::chrono::steady_clock::time_point deadline);
  // The same from the current copy, for one record.
  std::shared_ptr<const domain::ReferenceData> covering(
      const domain::HistoryRecord& record, std::chrono::steady_clock::time_point deadline) {
    return covering(get(), std::span(&record, 1), deadline);
  }
  // How long a request waits for newer reference data: two refresh intervals.
  std::chrono::milliseconds newer_wait() const { return 2 * refresh_interval_; }

 private:
  const std::chrono::milliseconds refresh_interval_;
  Refreshed<domain::ReferenceData> data_;
};

}  // namespace connector::db
