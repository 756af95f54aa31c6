#pragma once
// Reads the change feed of history (sql/migrations/0006: history_changes), for the event
// publisher: the changes after a position, each with its record as it is now, and one record's
// current state with the position of its newest change.
#include <cstdint>
#include <optional>
#include <vector>

#include "db/connection.h"
#include "domain/history.h"

namespace connector::db {

struct FeedChange {
  std::uint64_t seq = 0;
  // The record as it is now; none when it has been deleted since.
  std::optional<domain::HistoryRecord> record;
};

// At most `limit` changes with seq > after, in seq order.
std::vector<FeedChange> read_feed(Connection& db, std::uint64_t after, std::uint32_t limit);

// The newest seq the feed holds, 0 when it holds none.
std::uint64_t feed_end(Connection& db);

// A record as it is now, and the seq of its newest change the feed holds (0: none, e.g. only
// bulk-loaded, or last changed before the feed's trim).
struct RecordState {
  domain::HistoryRecord record;
  std::uint64_t seq = 0;
};
std::optional<RecordState> find_record_state(Connection& db, std::uint64_t history_id);

}  // namespace connector::db
