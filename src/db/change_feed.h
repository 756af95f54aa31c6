#pragma once
// Reads the change feed of history (sql/migrations/0006 and 0007: history_changes), whose rows
// carry the record as each change left it: for the event publisher, the changes after a
// position; for a subscriber that comes back after an id it has seen (api/event_stream.h), the
// changes of its record or address it missed; and a record's current state with the position
// of its newest change.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "db/connection.h"
#include "domain/history.h"

namespace connector::db {

struct FeedChange {
  std::uint64_t seq = 0;
  // The record as this change left it; none for a row written before 0007 whose record was
  // deleted before the migration (nothing to show: passed over).
  std::optional<domain::HistoryRecord> record;
  std::int64_t changed_us = 0;  // when it was written: the writing server's clock, unix µs
};

// At most `limit` changes with seq > after, in seq order.
std::vector<FeedChange> read_feed(Connection& db, std::uint64_t after, std::uint32_t limit);

// The changes with after < seq <= upto of one record (history.id), or of every record an
// address is part of (as deposit address, sender or destination), in seq order, at most
// `limit`; each with its record.
std::vector<FeedChange> record_changes_between(Connection& db, std::uint64_t history_id,
                                               std::uint64_t after, std::uint64_t upto,
                                               std::uint32_t limit);
std::vector<FeedChange> address_changes_between(Connection& db, std::string_view address,
                                                std::uint64_t after, std::uint64_t upto,
                                                std::uint32_t limit);

// The newest seq the feed holds, 0 when it holds none.
std::uint64_t feed_end(Connection& db);

// A record as it is now, and the seq of its newest change the feed holds (0: none, e.g. only
// bulk-loaded, or last changed before the feed's trim).
struct RecordState {
  domain::HistoryRecord record;
  std::uint64_t seq = 0;
};
std::optional<RecordState> find_record_state(Connection& db, std::uint64_t history_id);

// The statements these run, one each (db/statement_set.h).
std::vector<std::string> change_feed_statements();

}  // namespace connector::db
