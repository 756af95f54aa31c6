#include "admin/bulk_history.h"

#include <cppconn/resultset.h>

#include <set>

#include "admin/history_generator.h"
#include "admin/import_writes.h"
#include "admin/progress.h"
#include "db/refreshed_reference.h"

namespace connector::admin {
namespace {

constexpr std::uint64_t kRowsPerTransaction = 10'000;

void execute(db::Connection& db, const std::string& sql_text) { db.execute(sql_text); }

std::uint64_t next_id(db::Connection& db) {
  auto rs = db.query("SELECT COALESCE(MAX(id), 0) + 1 FROM history");
  rs->next();
  return db::read_value<std::uint64_t>(*rs, 1);
}

void rebuild_counts(db::Connection& db) {
  db.begin();
  execute(db, "DELETE FROM history_counts");
  execute(db,
          "INSERT INTO history_counts SELECT status, pair_id, source_chain, destination_chain, "
          "source_asset_id, destination_asset_id, COUNT(*) FROM history GROUP BY status, "
          "pair_id, source_chain, destination_chain, source_asset_id, destination_asset_id");
  execute(db, "DELETE FROM history_address_counts");
  for (const char* column : {"source_deposit_address", "source_sender", "destination_address"}) {
    execute(db, std::string("INSERT INTO history_address_counts SELECT '") + column + "', " +
                    column + ", status, COUNT(*) FROM history GROUP BY " + column + ", status");
  }
  db.commit();
}

}  // namespace

std::uint64_t generate_history(db::Connection& db, const BulkHistoryOptions& options,
                               std::ostream* progress) {
  const auto reference = db::load_reference_data(db);
  const std::uint64_t recipients =
      options.recipients != 0 ? options.recipients : std::max<std::uint64_t>(64, options.count / 8);
  HistoryGenerator generator(reference, options.seed, recipients);
  const auto refs = chain_refs(db);
  const std::uint64_t first = next_id(db);

  // Session settings of this connection only: counters rebuilt at the end, and the rows are
  // coherent by construction, so foreign keys need not be looked up row by row.
  execute(db, "SET @connector_bulk_load = 1");
  execute(db, "SET foreign_key_checks = 0");
  Progress shown("gen-history", options.count, progress);
  std::vector<HistoryRow> rows;
  std::vector<DepositAccountRow> accounts;
  std::set<std::string> recorded;
  for (std::uint64_t done = 0; done < options.count;) {
    const std::uint64_t n = std::min(kRowsPerTransaction, options.count - done);
    rows.clear();
    accounts.clear();
    for (std::uint64_t i = 0; i < n; ++i) {
      rows.push_back(generator.next(first + done + i));
      const auto& r = rows.back();
      if (recorded.insert(r.source_slug + r.source_deposit_address).second) {
        accounts.push_back(
            {r.source_slug, r.source_deposit_address, r.destination_slug, r.destination_address});
      }
    }
    db.begin();
    write_history_rows(db, rows, refs);
    write_deposit_account_rows(db, accounts, refs);
    db.commit();
    done += n;
    shown.advance(n);
  }
  execute(db, "SET foreign_key_checks = 1");
  execute(db, "SET @connector_bulk_load = NULL");
  rebuild_counts(db);
  refresh_statistics(db);
  shown.finish();
  return first;
}

}  // namespace connector::admin
