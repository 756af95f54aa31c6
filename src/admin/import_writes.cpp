#include "admin/import_writes.h"

#include <algorithm>
#include <span>

#include "admin/progress.h"
#include "admin/write_tables.h"
#include "util/log.h"

namespace connector::admin {
namespace {

using db::OnDuplicate;

// One statement per row: the reference tables hold a handful of rows.
template <typename Row, typename Context>
void write_each(db::Connection& db, const db::WriteTable<Row, Context>& table,
                std::span<const Row> rows, const Context& context) {
  const std::string sql = insert_sql(table, 1, OnDuplicate::kUpdate);
  for (const auto& row : rows) db.execute(sql, params_of(table, row, context));
}

// Statements of up to kRowsPerStatement rows: one round trip and one parse per chunk instead
// of per row.
template <typename Row>
void write_in_chunks(db::Connection& db, const db::WriteTable<Row, ChainRefs>& table,
                     OnDuplicate on_duplicate, std::span<const Row> rows, const ChainRefs& refs) {
  constexpr std::size_t kRowsPerStatement = 500;
  for (std::size_t first = 0; first < rows.size(); first += kRowsPerStatement) {
    const std::size_t count = std::min(kRowsPerStatement, rows.size() - first);
    db::Params params;
    params.reserve(count * table.columns.size());
    for (const auto& row : rows.subspan(first, count)) append_params(params, table, row, refs);
    db.execute(insert_sql(table, count, on_duplicate), params);
  }
}

void write_connects(db::Connection& db, std::span<const ConnectRow> connects,
                    const ChainRefs& refs) {
  // A connect already stored in the other orientation is the same connect.
  const std::string sql = insert_where_sql(kConnectsTable, kNewConnect);
  for (const auto& c : connects) db.execute(sql, params_of(kConnectsTable, c, refs));
}

}  // namespace

ChainRefs chain_refs(db::Connection& db) {
  struct ChainRef {
    std::string slug;
    std::uint16_t id = 0;
  };
  static constexpr db::Column<ChainRef> kColumns[] = {db::field<&ChainRef::slug>("slug"),
                                                      db::field<&ChainRef::id>("id")};
  ChainRefs refs;
  for (const auto& chain : db.rows<ChainRef>(
           "SELECT " + db::select_list<ChainRef>(kColumns) + " FROM chains", {}, kColumns)) {
    refs[chain.slug] = chain.id;
  }
  return refs;
}

void write_history_rows(db::Connection& db, std::span<const HistoryRow> rows,
                        const ChainRefs& refs) {
  write_in_chunks(db, kHistoryTable, OnDuplicate::kUpdate, rows, refs);
}

void write_deposit_account_rows(db::Connection& db, std::span<const DepositAccountRow> rows,
                                const ChainRefs& refs) {
  write_in_chunks(db, kDepositAccountsTable, OnDuplicate::kIgnore, rows, refs);
}

namespace {

// Large documents are written in chunks so a person watching sees the rows go in.
void write_history_in_chunks(db::Connection& db, std::span<const HistoryRow> rows,
                             const ChainRefs& refs, Progress* progress) {
  constexpr std::size_t kChunk = 5'000;
  for (std::size_t at = 0; at < rows.size(); at += kChunk) {
    const auto chunk = rows.subspan(at, std::min(kChunk, rows.size() - at));
    write_history_rows(db, chunk, refs);
    if (progress != nullptr) progress->advance(chunk.size());
  }
}

}  // namespace

ImportCounts write_import_batch(db::Connection& db, const ImportBatch& batch, Progress* progress) {
  db.begin();
  try {
    write_each(db, kChainsTable, std::span(batch.networks), db::NoContext{});
    const auto refs = chain_refs(db);
    write_each(db, kAssetsTable, std::span(batch.assets), refs);
    write_connects(db, batch.connects, refs);
    write_each(db, kPairsTable, std::span(batch.pairs), db::NoContext{});
    write_each(db, kChainStatusTable, std::span(batch.chains), refs);
    write_history_in_chunks(db, batch.history, refs, progress);
    write_deposit_account_rows(db, batch.deposit_accounts, refs);
    db.commit();
  } catch (...) {
    db.rollback();
    throw;
  }
  refresh_statistics(db);
  return {batch.networks.size(),        batch.assets.size(), batch.connects.size(),
          batch.pairs.size(),           batch.chains.size(), batch.history.size(),
          batch.deposit_accounts.size()};
}

void refresh_statistics(db::Connection& db) noexcept {
  // Reported, not thrown: the data is committed by now, and statistics are only advice.
  try {
    auto rs = db.query(
        "ANALYZE TABLE chains, chain_status, assets, connects, pairs, history, history_counts, "
        "history_address_counts, "
        "deposit_accounts");
    while (rs->next()) {  // Table, Op, Msg_type, Msg_text
      if (db::read_value<std::string>(*rs, 3) == "error") {
        util::log_warning("ANALYZE TABLE " + db::read_value<std::string>(*rs, 1) + ": " +
                          db::read_value<std::string>(*rs, 4));
      }
    }
  } catch (const std::exception& e) {
    util::log_warning(std::string("the tables' statistics were not refreshed: ") + e.what());
  }
}

}  // namespace connector::admin
