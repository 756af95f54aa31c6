#pragma once
// Writes a validated import batch in one transaction: all of it or nothing. Every row is an
// upsert keyed by its natural key, so loading the same file twice changes nothing.
#include <span>
#include <string>

#include "admin/import_document.h"
#include "admin/write_tables.h"
#include "db/connection.h"

namespace connector::admin {

struct ImportCounts {
  std::size_t networks = 0, assets = 0, connects = 0, pairs = 0, chains = 0, history = 0,
              deposit_accounts = 0;
};

class Progress;

// `progress` (may be null) counts the history records as they are written.
ImportCounts write_import_batch(db::Connection& db, const ImportBatch& batch,
                                Progress* progress = nullptr);

// chains.slug -> chains.id of every chain stored.
ChainRefs chain_refs(db::Connection& db);

// Upserts history rows and inserts-if-absent deposit accounts, many rows per statement: the
// import and the bulk generator share these.
void write_history_rows(db::Connection& db, std::span<const HistoryRow> rows,
                        const ChainRefs& refs);
void write_deposit_account_rows(db::Connection& db, std::span<const DepositAccountRow> rows,
                                const ChainRefs& refs);

// ANALYZE TABLE of the tables a load fills: after a bulk load InnoDB's statistics may still say
// the tables are empty. The service's plans do not depend on them (db/history_statements.h),
// but other clients of the database (and EXPLAIN) do.
// Failures are logged, not thrown: the data is committed before.
void refresh_statistics(db::Connection& db) noexcept;

}  // namespace connector::admin
