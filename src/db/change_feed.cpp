#include "db/change_feed.h"

#include <string>

#include "db/history_statements.h"

namespace connector::db {
namespace {

// The record's columns first (read_row reads from the first; the feed's rows have history's
// names, `id` included: 0007), then the change's seq, whether the row carries a state, and when
// it was written. Each
// statement forces its index, as every history read does (db/history_statements.h): a plan
// never depends on the table's statistics.
std::string feed_select(std::string_view hint = "") {
  return "SELECT " + std::string(hint) + select_list(history_record_columns()) +
         ", h.seq, h.hash IS NOT NULL, h.changed_us";
}

const std::string& feed_statement() {
  static const std::string sql = feed_select() +
                                 " FROM history_changes h FORCE INDEX (PRIMARY) WHERE h.seq > ? "
                                 "ORDER BY h.seq LIMIT ?";
  return sql;
}

const std::string& record_changes_statement() {
  // The index is (history_id, seq) (InnoDB ends it with the primary key): one range.
  static const std::string sql =
      feed_select() +
      " FROM history_changes h FORCE INDEX (ix_history_changes_record) WHERE h.history_id = ? "
      "AND h.seq > ? AND h.seq <= ? AND h.hash IS NOT NULL ORDER BY h.seq LIMIT ?";
  return sql;
}

const std::string& address_changes_statement() {
  // One range per address column (its index ends with seq), then those rows by seq: the
  // ranges first, whatever the statistics say (STRAIGHT_JOIN).
  static const std::string sql = [] {
    std::string ranges;
    for (const std::string_view column : kCountedAddressColumns) {
      if (!ranges.empty()) ranges += " UNION ";
      ranges += "(SELECT seq FROM history_changes FORCE INDEX (ix_history_changes_";
      ranges += column;  // sql/migrations/0007 names each index after its column
      ranges += ") WHERE ";
      ranges += column;
      ranges += " = ? AND seq > ? AND seq <= ? ORDER BY seq LIMIT ?)";
    }
    return feed_select("STRAIGHT_JOIN ") + " FROM (" + ranges +
           ") m JOIN history_changes h FORCE INDEX (PRIMARY) ON h.seq = m.seq WHERE h.hash IS "
           "NOT NULL ORDER BY h.seq LIMIT ?";
  }();
  return sql;
}

const std::string& feed_end_statement() {
  static const std::string sql = "SELECT COALESCE(MAX(seq), 0) FROM history_changes";
  return sql;
}

const std::string& record_state_statement() {
  static const std::string sql =
      "SELECT " + select_list(history_record_columns()) +
      ", (SELECT MAX(c.seq) FROM history_changes c WHERE c.history_id = h.id) FROM history h "
      "WHERE h.id = ?";
  return sql;
}

std::vector<FeedChange> read_changes(Connection& db, const std::string& sql, const Params& params) {
  return db.run([&](Connection& session) {
    const auto columns = history_record_columns();
    const int seq_column = static_cast<int>(columns.size()) + 1;
    std::vector<FeedChange> changes;
    auto rs = session.query(sql, params);
    while (rs->next()) {
      FeedChange change;
      change.seq = read_value<std::uint64_t>(*rs, seq_column);
      if (read_value<bool>(*rs, seq_column + 1)) change.record = read_row(*rs, columns);
      change.changed_us = read_value<std::int64_t>(*rs, seq_column + 2);
      changes.push_back(std::move(change));
    }
    return changes;
  });
}

}  // namespace

std::vector<FeedChange> read_feed(Connection& db, std::uint64_t after, std::uint32_t limit) {
  return read_changes(db, feed_statement(), {after, std::uint64_t{limit}});
}

std::vector<FeedChange> record_changes_between(Connection& db, std::uint64_t history_id,
                                               std::uint64_t after, std::uint64_t upto,
                                               std::uint32_t limit) {
  return read_changes(db, record_changes_statement(),
                      {history_id, after, upto, std::uint64_t{limit}});
}

std::vector<FeedChange> address_changes_between(Connection& db, std::string_view address,
                                                std::uint64_t after, std::uint64_t upto,
                                                std::uint32_t limit) {
  Params params;
  for (std::size_t i = 0; i < std::size(kCountedAddressColumns); ++i) {
    params.emplace_back(std::string(address));
    params.emplace_back(after);
    params.emplace_back(upto);
    params.emplace_back(std::uint64_t{limit});
  }
  params.emplace_back(std::uint64_t{limit});
  return read_changes(db, address_changes_statement(), params);
}

std::uint64_t feed_end(Connection& db) {
  return db.run([](Connection& session) -> std::uint64_t {
    auto rs = session.query(feed_end_statement());
    return rs->next() ? read_value<std::uint64_t>(*rs, 1) : 0;
  });
}

std::optional<RecordState> find_record_state(Connection& db, std::uint64_t history_id) {
  return db.run([&](Connection& session) -> std::optional<RecordState> {
    const auto columns = history_record_columns();
    auto rs = session.query(record_state_statement(), {history_id});
    if (!rs->next()) return std::nullopt;
    return RecordState{read_row(*rs, columns),
                       read_value<std::uint64_t>(*rs, static_cast<int>(columns.size()) + 1)};
  });
}

std::vector<std::string> change_feed_statements() {
  return {feed_statement(), record_changes_statement(), address_changes_statement(),
          feed_end_statement(), record_state_statement()};
}

}  // namespace connector::db
