#include "db/history_reads.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "db/history_statements.h"
#include "db/page_walk.h"

namespace connector::db {
namespace {

using domain::HistoryRecord;

std::uint64_t count(Connection& db, const AccessPath& path, const HistoryFilter& filter) {
  const auto statement = count_statement(path, filter);
  auto rs = db.query(statement.sql, statement.params);
  return rs->next() ? read_value<std::uint64_t>(*rs, 1) : 0;
}

// Near the start of a list, reading whole rows in index order is cheaper than materialising
// the page's ids first (a third less at offset 0, even at 100, three times dearer at 400;
// mariadb client, 200,000 records); deeper down the deferred join skips the offset on the
// index alone.
constexpr std::uint64_t kDeferredJoinFromOffset = 100;

// A page's rows, and the list's total when the statement carried it (the direct form, and only
// when the page has a row to carry it on).
struct PageRead {
  std::vector<HistoryRecord> records;
  std::optional<std::uint64_t> total;
};

// The rows come back in the order `shown`, whichever way the walk went.
PageRead page(Connection& db, const AccessPath& path, const HistoryFilter& filter,
              const PageWalk& walk, domain::SortOrder shown) {
  const auto form = walk.offset < kDeferredJoinFromOffset ? PageForm::kDirect : PageForm::kDeferred;
  auto statement = page_statement(path, filter, walk.order, form);
  statement.params.emplace_back(std::uint64_t{walk.limit});
  statement.params.emplace_back(walk.offset);
  const auto columns = history_record_columns();
  const int total_column = static_cast<int>(columns.size()) + 1;
  PageRead read;
  read.records.reserve(walk.limit);
  auto rs = db.query(statement.sql, statement.params);
  while (rs->next()) {
    read.records.push_back(read_row(*rs, columns));
    if (form == PageForm::kDirect) read.total = read_value<std::uint64_t>(*rs, total_column);
  }
  // A direct page walked as shown comes in order; otherwise the page's few rows are put in
  // order here rather than by an outer ORDER BY, which would make MariaDB sort through a
  // temporary table on every page.
  if (form == PageForm::kDirect && walk.order == shown) return read;
  const bool ascending = shown == domain::SortOrder::kAscending;
  std::sort(read.records.begin(), read.records.end(), [ascending](const auto& x, const auto& y) {
    return ascending ? x.id < y.id : x.id > y.id;
  });
  return read;
}

// Runs work() in one read snapshot (REPEATABLE READ: fixed at the first read).
template <typename Work>
auto in_one_snapshot(Connection& db, Work&& work) {
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

HistoryPage find_history_page(Connection& db, const HistoryFilter& filter, std::uint64_t page_id,
                              std::uint32_t page_size, domain::SortOrder order) {
  const AccessPath& path = choose_access_path(filter);
  return db.run([&](Connection& session) {
    HistoryPage result;
    // Near the start (the pages asked for most) the page comes with its total, one round trip;
    // an empty one (past the end, or no match) carries no total, which is then counted.
    if (page_id < kDeferredJoinFromOffset && page_id * page_size < kDeferredJoinFromOffset) {
      const PageWalk forward{order, page_id * page_size, page_size, false};
      auto read = page(session, path, filter, forward, order);
      if (read.total) {
        result.total = *read.total;
        result.records = std::move(read.records);
        return result;
      }
    }
    result.total = count(session, path, filter);
    // Checked by division so page_id * page_size cannot overflow.
    if (page_size == 0 || page_id >= (result.total + page_size - 1) / page_size) return result;
    const std::uint64_t offset = page_id * page_size;
    const auto walk = cheapest_walk(result.total, offset, page_size, order);
    if (!walk.reversed) {
      result.records = page(session, path, filter, walk, order).records;
      return result;
    }
    // Counted from the other end, the page is only right if the total it is counted from is
    // the one the page is read with: both come from one snapshot.
    return in_one_snapshot(session, [&] {
      result.total = count(session, path, filter);
      if (offset < result.total) {
        result.records = page(session, path, filter,
                              cheapest_walk(result.total, offset, page_size, order), order)
                             .records;
      }
      return result;
    });
  });
}

std::optional<HistoryRecord> find_history_by_hash(Connection& db, const std::string& hash) {
  return db.run([&](Connection& session) -> std::optional<HistoryRecord> {
    auto records = session.rows(by_hash_statement(), {hash}, history_record_columns());
    if (records.empty()) return std::nullopt;
    return std::move(records.front());
  });
}

}  // namespace connector::db
