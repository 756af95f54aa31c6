#include "db/change_feed.h"

#include <string>

#include "db/history_statements.h"

namespace connector::db {
namespace {

const std::string& feed_statement() {
  // The record's columns first (read_row reads from the first), then the change's. A deleted
  // record's columns are NULL: h.id IS NOT NULL says whether there is one to read.
  static const std::string sql =
      "SELECT " + select_list(history_record_columns()) +
      ", c.seq, h.id IS NOT NULL FROM history_changes c LEFT JOIN history h ON h.id = "
      "c.history_id WHERE c.seq > ? ORDER BY c.seq LIMIT ?";
  return sql;
}

const std::string& record_state_statement() {
  static const std::string sql =
      "SELECT " + select_list(history_record_columns()) +
      ", (SELECT MAX(c.seq) FROM history_changes c WHERE c.history_id = h.id) FROM history h "
      "WHERE h.id = ?";
  return sql;
}

}  // namespace

std::vector<FeedChange> read_feed(Connection& db, std::uint64_t after, std::uint32_t limit) {
  return db.run([&](Connection& session) {
    const auto columns = history_record_columns();
    const int seq_column = static_cast<int>(columns.size()) + 1;
    std::vector<FeedChange> changes;
    auto rs = session.query(feed_statement(), {after, std::uint64_t{limit}});
    while (rs->next()) {
      FeedChange change;
      change.seq = read_value<std::uint64_t>(*rs, seq_column);
      if (read_value<bool>(*rs, seq_column + 1)) change.record = read_row(*rs, columns);
      changes.push_back(std::move(change));
    }
    return changes;
  });
}

std::uint64_t feed_end(Connection& db) {
  return db.run([](Connection& session) -> std::uint64_t {
    auto rs = session.query("SELECT COALESCE(MAX(seq), 0) FROM history_changes");
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

}  // namespace connector::db
