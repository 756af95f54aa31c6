#include "db/history_store.h"

#include <algorithm>
#include <vector>

#include "db/history_statements.h"
#include "db/page_walk.h"

namespace connector::db {
namespace {

using domain::HistoryFilter;
using domain::HistoryRecord;

std::uint64_t count(Database& db, const AccessPath& path, const HistoryFilter& filter) {
  const auto statement = count_statement(path, filter);
  auto rs = db.query(statement.sql, statement.params);
  return rs->next() ? read_value<std::uint64_t>(*rs, 1) : 0;
}

// Near the start of a list, reading whole rows in index order is cheaper than materialising
// the page's ids first (a third less at offset 0, even at 100, three times dearer at 400;
// mariadb client, 200,000 records); deeper down the deferred join skips the offset on the
// index alone.
constexpr std::uint64_t kDeferredJoinFromOffset = 100;

// The rows come back in the order `shown`, whichever way the walk went.
std::vector<HistoryRecord> page(Database& db, const AccessPath& path, const HistoryFilter& filter,
                                const PageWalk& walk, domain::SortOrder shown) {
  const auto form = walk.offset < kDeferredJoinFromOffset ? PageForm::kDirect : PageForm::kDeferred;
  auto statement = page_statement(path, filter, walk.order, form);
  statement.params.emplace_back(std::uint64_t{walk.limit});
  statement.params.emplace_back(walk.offset);
  auto records = db.rows(statement.sql, statement.params, history_record_columns());
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
  const AccessPath& path = choose_access_path(filter);
  return db.run([&](Database& session) {
    HistoryPage result;
    result.total = count(session, path, filter);
    // Checked by division so page_id * page_size cannot overflow.
    if (page_size == 0 || page_id >= (result.total + page_size - 1) / page_size) return result;
    const std::uint64_t offset = page_id * page_size;
    const auto walk = cheapest_walk(result.total, offset, page_size, order);
    if (!walk.reversed) {
      result.records = page(session, path, filter, walk, order);
      return result;
    }
    // Counted from the other end, the page is only right if the total it is counted from is
    // the one the page is read with: both come from one snapshot.
    return in_one_snapshot(session, [&] {
      result.total = count(session, path, filter);
      if (offset < result.total) {
        result.records = page(session, path, filter,
                              cheapest_walk(result.total, offset, page_size, order), order);
      }
      return result;
    });
  });
}

std::optional<HistoryRecord> find_history_by_hash(Database& db, const std::string& hash) {
  return db.run([&](Database& session) -> std::optional<HistoryRecord> {
    auto records = session.rows(by_hash_statement(), {hash}, history_record_columns());
    if (records.empty()) return std::nullopt;
    return std::move(records.front());
  });
}

}  // namespace connector::db
