#include "db/history_store.h"

#include <cppconn/prepared_statement.h>

#include <algorithm>

#include <vector>

#include "db/page_walk.h"
#include "db/rows.h"

namespace connector::db {
namespace {

using domain::HistoryFilter;
using domain::HistoryRecord;

// Every record column; chains and assets come from the reference snapshot when rendering.
constexpr const char* kRecordColumns =
    "h.id, h.hash, h.pair_id, h.source_chain, h.destination_chain, "
    "h.source_deposit_address, h.source_sender, h.destination_address, "
    "h.source_block_number, h.destination_block_number, "
    "h.source_block_timestamp, h.destination_block_timestamp, "
    "h.source_tx_hash, h.destination_tx_hash, h.source_asset_id, h.destination_asset_id, "
    "h.source_amount, h.destination_amount, h.fee, h.status, h.status_message";

HistoryRecord read_record(sql::ResultSet& rs) {
  HistoryRecord r;
  r.id = text(rs, 1);
  r.hash = text(rs, 2);
  r.pair_id = u64(rs, 3);
  r.source_chain = static_cast<std::uint16_t>(u64(rs, 4));
  r.destination_chain = static_cast<std::uint16_t>(u64(rs, 5));
  r.source_deposit_address = text(rs, 6);
  r.source_sender = text(rs, 7);
  r.destination_address = text(rs, 8);
  r.source_block_number = text(rs, 9);
  r.destination_block_number = text(rs, 10);
  r.source_block_timestamp = text(rs, 11);
  r.destination_block_timestamp = text(rs, 12);
  r.source_tx_hash = text(rs, 13);
  r.destination_tx_hash = text(rs, 14);
  r.source_asset_id = u64(rs, 15);
  r.destination_asset_id = u64(rs, 16);
  r.source_amount = text(rs, 17);
  r.destination_amount = text(rs, 18);
  r.fee = text(rs, 19);
  r.status = text(rs, 20);
  r.status_message = text(rs, 21);
  return r;
}

// One "column = ?" condition of the WHERE clause and its value. Column names come from this
// table only; values are always bound.
// `coarse` columns are the dimensions of history_counts: a filter on those alone is counted by
// summing counter rows; a fine one (address, tx hash) counts its own small index range.
struct Condition {
  const char* column;
  bool coarse;
  bool is_text;
  std::string text;
  std::uint64_t number;
};

std::vector<Condition> conditions(const HistoryFilter& f) {
  std::vector<Condition> out;
  auto text = [&out](const char* column, bool coarse, const std::optional<std::string>& value) {
    if (value) out.push_back({column, coarse, true, *value, 0});
  };
  auto number = [&out](const char* column, const auto& value) {
    if (value) out.push_back({column, true, false, {}, static_cast<std::uint64_t>(*value)});
  };
  text("source_deposit_address", false, f.source_deposit_address);
  text("source_sender", false, f.source_sender);
  number("source_chain", f.source_chain);
  number("source_asset_id", f.source_asset_id);
  text("source_tx_hash", false, f.source_tx_hash);
  text("destination_address", false, f.destination_address);
  number("destination_chain", f.destination_chain);
  number("destination_asset_id", f.destination_asset_id);
  text("destination_tx_hash", false, f.destination_tx_hash);
  number("pair_id", f.pair_id);
  text("status", true, f.status);
  return out;
}

std::string where_clause(const std::vector<Condition>& conds) {
  std::string sql;
  for (const auto& c : conds) {
    sql += sql.empty() ? " WHERE " : " AND ";
    sql += c.column;
    sql += " = ?";
  }
  return sql;
}

// Binds the condition values from parameter 1 on; returns the next free index.
int bind(sql::PreparedStatement& stmt, const std::vector<Condition>& conds) {
  int index = 1;
  for (const auto& c : conds) {
    if (c.is_text) {
      stmt.setString(index++, c.text);
    } else {
      stmt.setUInt64(index++, c.number);
    }
  }
  return index;
}

// Exact either way: the counter rows are kept by triggers in the same transactions as history.
std::uint64_t count(Database& db, const std::vector<Condition>& conds) {
  const bool coarse =
      std::all_of(conds.begin(), conds.end(), [](const Condition& c) { return c.coarse; });
  auto& stmt = db.prepare(coarse ? "SELECT COALESCE(SUM(records), 0) FROM history_counts" +
                                       where_clause(conds)
                                 : "SELECT COUNT(*) FROM history" + where_clause(conds));
  bind(stmt, conds);
  std::unique_ptr<sql::ResultSet> rs(stmt.executeQuery());
  return rs->next() ? u64(*rs, 1) : 0;
}

// A page is read through a deferred join: its ids come from the narrowest index alone, and
// only those rows are read in full. Near the start of the unfiltered list, reading whole rows
// in primary-key order is cheaper than materialising the ids first (a third less at offset 0,
// even at 100, three times dearer at 400; mariadb client, 200,000 records). Filtered, the
// direct form lets MariaDB pick index intersections with a filesort for some shapes
// (pair_id + status), so those keep the join, whose plans test_history_scale checks.
constexpr std::uint64_t kDeferredJoinFromOffset = 100;

std::string page_statement(const std::vector<Condition>& conds, const PageWalk& walk) {
  const std::string order_by = std::string(" ORDER BY id ") +
                               (walk.order == domain::SortOrder::kAscending ? "ASC" : "DESC") +
                               " LIMIT ? OFFSET ?";
  if (conds.empty() && walk.offset < kDeferredJoinFromOffset) {
    return std::string("SELECT ") + kRecordColumns + " FROM history h" + order_by;
  }
  return std::string("SELECT ") + kRecordColumns + " FROM (SELECT id FROM history" +
         // Unfiltered, the narrowest index in id order skips the offset fastest.
         (conds.empty() ? " FORCE INDEX (ix_history_id)" : "") + where_clause(conds) + order_by +
         ") p JOIN history h ON h.id = p.id";
}

// The rows come back in the order `shown`, whichever way the walk went.
std::vector<HistoryRecord> page(Database& db, const std::vector<Condition>& conds,
                                const PageWalk& walk, domain::SortOrder shown) {
  auto& stmt = db.prepare(page_statement(conds, walk));
  const int next = bind(stmt, conds);
  stmt.setUInt64(next, walk.limit);
  stmt.setUInt64(next + 1, walk.offset);
  std::unique_ptr<sql::ResultSet> rs(stmt.executeQuery());
  std::vector<HistoryRecord> records;
  records.reserve(walk.limit);
  while (rs->next()) records.push_back(read_record(*rs));
  // The page's few rows are put in order here rather than by an outer ORDER BY, which would
  // make MariaDB sort through a temporary table on every page.
  const bool ascending = shown == domain::SortOrder::kAscending;
  std::sort(records.begin(), records.end(), [ascending](const auto& x, const auto& y) {
    const auto a = std::stoull(x.id), b = std::stoull(y.id);
    return ascending ? a < b : a > b;
  });
  return records;
}

// Runs work() in one read snapshot (REPEATABLE READ: fixed at the first read).
template <typename Work>
auto in_one_snapshot(Database& db, Work&& work) {
  db.begin();
  try {
    auto result = work();
    db.commit();
    return result;
  } catch (...) {
    db.rollback();
    throw;
  }
}

}  // namespace

HistoryPage find_history_page(Database& db, const HistoryFilter& filter, std::uint64_t page_id,
                              std::uint32_t page_size, domain::SortOrder order) {
  const auto conds = conditions(filter);
  return db.run([&](Database& session) {
    HistoryPage result;
    result.total = count(session, conds);
    // Checked by division so page_id * page_size cannot overflow.
    if (page_size == 0 || page_id >= (result.total + page_size - 1) / page_size) return result;
    const std::uint64_t offset = page_id * page_size;
    const auto walk = cheapest_walk(result.total, offset, page_size, order);
    if (!walk.reversed) {
      result.records = page(session, conds, walk, order);
      return result;
    }
    // Counted from the other end, the page is only right if the total it is counted from is
    // the one the page is read with: both come from one snapshot.
    return in_one_snapshot(session, [&] {
      result.total = count(session, conds);
      if (offset < result.total) {
        result.records =
            page(session, conds, cheapest_walk(result.total, offset, page_size, order), order);
      }
      return result;
    });
  });
}

std::optional<HistoryRecord> find_history_by_hash(Database& db, const std::string& hash) {
  return db.run([&](Database& session) -> std::optional<HistoryRecord> {
    auto& stmt = session.prepare(std::string("SELECT ") + kRecordColumns +
                                 " FROM history h WHERE h.hash = ?");
    stmt.setString(1, hash);
    std::unique_ptr<sql::ResultSet> rs(stmt.executeQuery());
    if (!rs->next()) return std::nullopt;
    return read_record(*rs);
  });
}

}  // namespace connector::db
