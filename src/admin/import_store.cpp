#include "admin/import_store.h"

#include <cppconn/prepared_statement.h>
#include <cppconn/resultset.h>

#include <algorithm>
#include <map>
#include <span>

#include "admin/progress.h"
#include "util/log.h"

namespace connector::admin {
namespace {

using sql::PreparedStatement;

// Binds an optional column: empty means NULL.
void set_nullable(PreparedStatement& stmt, int index, const std::string& value) {
  if (value.empty()) {
    stmt.setNull(index, 0);
  } else {
    stmt.setString(index, value);
  }
}

void write_networks(db::Connection& db, const ImportBatch& batch) {
  auto& stmt = db.prepare(
      "INSERT INTO chains (slug, network, chain_id, base_chain, deposit_factory, "
      "deposit_init_code_hash) VALUES (?, ?, ?, ?, ?, ?) ON DUPLICATE KEY UPDATE "
      "network = VALUE(network), chain_id = VALUE(chain_id), base_chain = VALUE(base_chain), "
      "deposit_factory = VALUE(deposit_factory), "
      "deposit_init_code_hash = VALUE(deposit_init_code_hash)");
  for (const auto& n : batch.networks) {
    stmt.setString(1, n.slug);
    stmt.setString(2, n.network);
    stmt.setUInt64(3, n.chain_id);
    stmt.setString(4, n.base_chain);
    set_nullable(stmt, 5, n.deposit_factory);
    set_nullable(stmt, 6, n.deposit_init_code_hash);
    stmt.executeUpdate();
  }
}

void write_assets(db::Connection& db, const ImportBatch& batch, const ChainRefs& refs) {
  auto& stmt = db.prepare(
      "INSERT INTO assets (id, chain_ref, address, name, symbol, decimals, asset_type) "
      "VALUES (?, ?, ?, ?, ?, ?, ?) ON DUPLICATE KEY UPDATE chain_ref = VALUE(chain_ref), "
      "address = VALUE(address), name = VALUE(name), symbol = VALUE(symbol), "
      "decimals = VALUE(decimals), asset_type = VALUE(asset_type)");
  for (const auto& a : batch.assets) {
    stmt.setUInt64(1, a.id);
    stmt.setUInt(2, refs.at(a.slug));
    stmt.setString(3, a.address);
    stmt.setString(4, a.name);
    stmt.setString(5, a.symbol);
    stmt.setInt(6, a.decimals);
    stmt.setString(7, a.asset_type);
    stmt.executeUpdate();
  }
}

void write_connects(db::Connection& db, const ImportBatch& batch, const ChainRefs& refs) {
  // A connect already stored in the other orientation is the same connect.
  auto& stmt = db.prepare(
      "INSERT INTO connects (chain_a, chain_b) SELECT ?, ? FROM DUAL WHERE NOT EXISTS "
      "(SELECT 1 FROM connects WHERE (chain_a = ? AND chain_b = ?) OR (chain_a = ? AND chain_b = "
      "?))");
  for (const auto& c : batch.connects) {
    const auto a = refs.at(c.slug_a), b = refs.at(c.slug_b);
    const std::uint16_t values[] = {a, b, a, b, b, a};
    for (int i = 0; i < 6; ++i) stmt.setUInt(i + 1, values[i]);
    stmt.executeUpdate();
  }
}

void write_pairs(db::Connection& db, const ImportBatch& batch) {
  auto& stmt = db.prepare(
      "INSERT INTO pairs (id, asset_a_id, asset_b_id, "
      "a2b_min_deposit_amount, a2b_fee_percent_millionths, a2b_fee_min_amount, "
      "a2b_auto_confirm_deposit_amount, a2b_disabled, "
      "b2a_min_deposit_amount, b2a_fee_percent_millionths, b2a_fee_min_amount, "
      "b2a_auto_confirm_deposit_amount, b2a_disabled) "
      "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON DUPLICATE KEY UPDATE "
      "asset_a_id = VALUE(asset_a_id), asset_b_id = VALUE(asset_b_id), "
      "a2b_min_deposit_amount = VALUE(a2b_min_deposit_amount), "
      "a2b_fee_percent_millionths = VALUE(a2b_fee_percent_millionths), "
      "a2b_fee_min_amount = VALUE(a2b_fee_min_amount), "
      "a2b_auto_confirm_deposit_amount = VALUE(a2b_auto_confirm_deposit_amount), "
      "a2b_disabled = VALUE(a2b_disabled), "
      "b2a_min_deposit_amount = VALUE(b2a_min_deposit_amount), "
      "b2a_fee_percent_millionths = VALUE(b2a_fee_percent_millionths), "
      "b2a_fee_min_amount = VALUE(b2a_fee_min_amount), "
      "b2a_auto_confirm_deposit_amount = VALUE(b2a_auto_confirm_deposit_amount), "
      "b2a_disabled = VALUE(b2a_disabled)");
  auto bind_direction = [&stmt](int first, const domain::DirectionSettings& d) {
    stmt.setString(first, d.min_deposit_amount);
    stmt.setUInt64(first + 1, d.fee_percent_millionths);
    stmt.setString(first + 2, d.fee_min_amount);
    stmt.setString(first + 3, d.auto_confirm_deposit_amount);
    stmt.setBoolean(first + 4, d.disabled);
  };
  for (const auto& p : batch.pairs) {
    stmt.setUInt64(1, p.id);
    stmt.setUInt64(2, p.asset_a_id);
    stmt.setUInt64(3, p.asset_b_id);
    bind_direction(4, p.a2b);
    bind_direction(9, p.b2a);
    stmt.executeUpdate();
  }
}

void write_chain_status(db::Connection& db, const ImportBatch& batch, const ChainRefs& refs) {
  auto& stmt = db.prepare(
      "INSERT INTO chain_status (chain_ref, status, latest_height, supply) VALUES (?, ?, ?, ?) "
      "ON DUPLICATE KEY UPDATE status = VALUE(status), latest_height = VALUE(latest_height), "
      "supply = VALUE(supply)");
  for (const auto& c : batch.chains) {
    stmt.setUInt(1, refs.at(c.slug));
    stmt.setString(2, std::string(domain::status_name(c.status)));
    stmt.setUInt64(3, c.latest_height);
    stmt.setString(4, c.supply);
    stmt.executeUpdate();
  }
}

constexpr const char* kHistoryColumns[] = {"id",
                                           "hash",
                                           "pair_id",
                                           "source_chain",
                                           "destination_chain",
                                           "source_deposit_address",
                                           "source_sender",
                                           "destination_address",
                                           "source_block_number",
                                           "destination_block_number",
                                           "source_block_timestamp",
                                           "destination_block_timestamp",
                                           "source_tx_hash",
                                           "source_tx_index",
                                           "destination_tx_hash",
                                           "source_asset_id",
                                           "destination_asset_id",
                                           "source_amount",
                                           "destination_amount",
                                           "fee",
                                           "status",
                                           "status_message"};

// "INSERT INTO table (columns) VALUES (?, ...), (?, ...) ... suffix" for `rows` rows.
std::string multi_row_insert(const char* verb, const char* table,
                             std::span<const char* const> columns, std::size_t rows,
                             const std::string& suffix) {
  std::string names, row = "(";
  for (const char* column : columns) {
    names += (names.empty() ? "" : ", ") + std::string(column);
    row += row.size() == 1 ? "?" : ", ?";
  }
  row += ")";
  std::string sql = std::string(verb) + " INTO " + table + " (" + names + ") VALUES ";
  for (std::size_t i = 0; i < rows; ++i) sql += (i == 0 ? "" : ", ") + row;
  return sql + suffix;
}

std::string history_upsert(std::size_t rows) {
  std::string updates;
  for (std::string_view column : kHistoryColumns) {
    if (column == "id") continue;
    updates += (updates.empty() ? "" : ", ") + std::string(column) + " = VALUE(" +
               std::string(column) + ")";
  }
  return multi_row_insert("INSERT", "history", kHistoryColumns, rows,
                          " ON DUPLICATE KEY UPDATE " + updates);
}

int bind_history_row(PreparedStatement& stmt, int i, const HistoryRow& r, const ChainRefs& refs) {
  stmt.setUInt64(i++, r.id);
  stmt.setString(i++, r.hash);
  stmt.setUInt64(i++, r.pair_id);
  stmt.setUInt(i++, refs.at(r.source_slug));
  stmt.setUInt(i++, refs.at(r.destination_slug));
  stmt.setString(i++, r.source_deposit_address);
  stmt.setString(i++, r.source_sender);
  stmt.setString(i++, r.destination_address);
  stmt.setString(i++, r.source_block_number);
  set_nullable(stmt, i++, r.destination_block_number);
  stmt.setString(i++, r.source_block_timestamp);
  set_nullable(stmt, i++, r.destination_block_timestamp);
  stmt.setString(i++, r.source_tx_hash);
  stmt.setUInt64(i++, r.source_tx_index);
  set_nullable(stmt, i++, r.destination_tx_hash);
  stmt.setUInt64(i++, r.source_asset_id);
  stmt.setUInt64(i++, r.destination_asset_id);
  stmt.setString(i++, r.source_amount);
  set_nullable(stmt, i++, r.destination_amount);
  set_nullable(stmt, i++, r.fee);
  stmt.setString(i++, std::string(domain::status_name(r.status)));
  set_nullable(stmt, i++, r.status_message);
  return i;
}

// Runs `bind_row` for each row in statements of up to kRowsPerStatement rows: one round trip
// and one parse per chunk instead of per row.
template <typename Row, typename MakeSql, typename BindRow>
void write_in_chunks(db::Connection& db, std::span<const Row> rows, MakeSql make_sql,
                     BindRow bind_row) {
  constexpr std::size_t kRowsPerStatement = 500;
  for (std::size_t first = 0; first < rows.size(); first += kRowsPerStatement) {
    const std::size_t count = std::min(kRowsPerStatement, rows.size() - first);
    auto& stmt = db.prepare(make_sql(count));
    int index = 1;
    for (std::size_t i = first; i < first + count; ++i) index = bind_row(stmt, index, rows[i]);
    stmt.executeUpdate();
  }
}

}  // namespace

ChainRefs chain_refs(db::Connection& db) {
  std::unique_ptr<sql::ResultSet> rs(db.prepare("SELECT slug, id FROM chains").executeQuery());
  ChainRefs refs;
  while (rs->next()) refs[rs->getString(1)] = static_cast<std::uint16_t>(rs->getUInt(2));
  return refs;
}

void write_history_rows(db::Connection& db, std::span<const HistoryRow> rows,
                        const ChainRefs& refs) {
  write_in_chunks(db, rows, history_upsert,
                  [&refs](PreparedStatement& stmt, int i, const HistoryRow& r) {
                    return bind_history_row(stmt, i, r, refs);
                  });
}

void write_deposit_account_rows(db::Connection& db, std::span<const DepositAccountRow> rows,
                                const ChainRefs& refs) {
  static constexpr const char* kColumns[] = {"deposit_chain", "deposit_address", "recipient_chain",
                                             "recipient_address"};
  write_in_chunks(
      db, rows,
      [](std::size_t n) {
        return multi_row_insert("INSERT IGNORE", "deposit_accounts", kColumns, n, "");
      },
      [&refs](PreparedStatement& stmt, int i, const DepositAccountRow& a) {
        stmt.setUInt(i++, refs.at(a.deposit_slug));
        stmt.setString(i++, a.deposit_address);
        stmt.setUInt(i++, refs.at(a.recipient_slug));
        stmt.setString(i++, a.recipient_address);
        return i;
      });
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
    write_networks(db, batch);
    const auto refs = chain_refs(db);
    write_assets(db, batch, refs);
    write_connects(db, batch, refs);
    write_pairs(db, batch);
    write_chain_status(db, batch, refs);
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
