#pragma once
// Writes a validated import batch in one transaction: all of it or nothing. Every row is an
// upsert keyed by its natural key, so loading the same file twice changes nothing.
#include "admin/import_document.h"
#include "db/database.h"

namespace connector::admin {

struct ImportCounts {
  std::size_t networks = 0, assets = 0, connects = 0, pairs = 0, chains = 0, history = 0,
              deposit_accounts = 0;
};

ImportCounts write_import_batch(db::Database& db, const ImportBatch& batch);

}  // namespace connector::admin
