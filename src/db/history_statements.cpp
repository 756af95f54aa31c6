#include "db/history_statements.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <span>

namespace connector::db {
namespace {

using domain::HistoryRecord;

// Chains and assets come from the refreshed reference data when rendering: a record joins nothing.
constexpr Column<HistoryRecord> kRecordColumns[] = {
    field<&HistoryRecord::id>("h.id"),
    field<&HistoryRecord::hash>("h.hash"),
    field<&HistoryRecord::pair_id>("h.pair_id"),
    field<&HistoryRecord::source_chain>("h.source_chain"),
    field<&HistoryRecord::destination_chain>("h.destination_chain"),
    field<&HistoryRecord::source_deposit_address>("h.source_deposit_address"),
    field<&HistoryRecord::source_sender>("h.source_sender"),
    field<&HistoryRecord::destination_address>("h.destination_address"),
    field<&HistoryRecord::source_block_number>("h.source_block_number"),
    field<&HistoryRecord::destination_block_number>("h.destination_block_number"),
    field<&HistoryRecord::source_block_timestamp>("h.source_block_timestamp"),
    field<&HistoryRecord::destination_block_timestamp>("h.destination_block_timestamp"),
    field<&HistoryRecord::source_tx_hash>("h.source_tx_hash"),
    field<&HistoryRecord::destination_tx_hash>("h.destination_tx_hash"),
    field<&HistoryRecord::source_asset_id>("h.source_asset_id"),
    field<&HistoryRecord::destination_asset_id>("h.destination_asset_id"),
    field<&HistoryRecord::source_amount>("h.source_amount"),
    field<&HistoryRecord::destination_amount>("h.destination_amount"),
    field<&HistoryRecord::fee>("h.fee"),
    field<&HistoryRecord::status>("h.status + 0"),
    field<&HistoryRecord::status_message>("h.status_message"),
};

// history_counts' dimensions (sql/migrations/0002), kept by its triggers.
constexpr std::string_view kCountedColumns[] = {"status",          "pair_id",
                                                "source_chain",    "destination_chain",
                                                "source_asset_id", "destination_asset_id"};

constexpr bool listed(std::span<const std::string_view> list, std::string_view column) {
  return std::find(list.begin(), list.end(), column) != list.end();
}

constexpr bool counted(std::size_t filter) {
  return listed(kCountedColumns, kHistoryFilters[filter].column);
}

// The counters that count a path's driving column, else the index range.
constexpr TotalSource total_of(std::string_view column) {
  if (column.empty() || listed(kCountedColumns, column)) return TotalSource::kCounters;
  if (listed(kCountedAddressColumns, column)) return TotalSource::kAddressCounters;
  return TotalSource::kIndex;
}

constexpr std::size_t kStatusFilter = history_filter("status");
constexpr std::size_t kNoFilter = kHistoryFilterCount;

constexpr std::size_t count_paths() {
  std::size_t paths = 1;  // the unfiltered list
  for (const auto& f : kHistoryFilters) {
    if (f.rank != 0) paths += f.status_index.empty() ? 1 : 2;
  }
  return paths;
}

// The access paths, from the filters' driving indexes by rank: the (column, status) variant of
// an index before the plain one, so it is taken whenever the status is set too; the unfiltered
// list last.
constexpr auto kPaths = [] {
  std::array<std::size_t, kHistoryFilterCount> driving{};
  std::size_t n = 0;
  for (std::size_t i = 0; i < kHistoryFilterCount; ++i) {
    if (kHistoryFilters[i].rank != 0) driving[n++] = i;
  }
  std::sort(driving.begin(), driving.begin() + static_cast<std::ptrdiff_t>(n),
            [](std::size_t a, std::size_t b) {
              return kHistoryFilters[a].rank < kHistoryFilters[b].rank;
            });
  std::array<AccessPath, count_paths()> paths{};
  std::size_t p = 0;
  for (std::size_t k = 0; k < n; ++k) {
    const auto& f = kHistoryFilters[driving[k]];
    const TotalSource total = total_of(f.column);
    if (!f.status_index.empty()) {
      paths[p++] = {f.status_index, f.column, true, total, driving[k]};
    }
    paths[p++] = {f.index, f.column, false, total, driving[k]};
  }
  paths[p] = {"PRIMARY", "", false, TotalSource::kCounters, kNoFilter};
  return paths;
}();

constexpr bool ranks_distinct() {
  for (std::size_t i = 1; i < kPaths.size(); ++i) {
    if (kPaths[i].filter != kPaths[i - 1].filter && kPaths[i].filter != kNoFilter &&
        kHistoryFilters[kPaths[i].filter].rank == kHistoryFilters[kPaths[i - 1].filter].rank) {
      return false;
    }
  }
  return true;
}
static_assert(ranks_distinct(), "two history filters with the same rank (db/history_filters.h)");

// A total from history_counts cannot see a filter it does not count: every such filter drives
// a path of its own, ahead of every path the counters total, so that it is never set on one.
constexpr bool uncounted_filters_drive_first() {
  for (std::size_t i = 0; i < kHistoryFilterCount; ++i) {
    if (counted(i)) continue;
    bool own_path = false;
    for (const auto& path : kPaths) {
      if (path.filter == i && !path.with_status) own_path = true;
      if (path.total == TotalSource::kCounters && !own_path) return false;
    }
  }
  return true;
}
static_assert(uncounted_filters_drive_first(),
              "a history filter history_counts does not count must drive an index ranked before "
              "every filter it counts (db/history_filters.h)");

// The unfiltered list's deferred join skips its offset on the narrowest index in id order.
constexpr std::string_view kNarrowIdIndex = "ix_history_id";

bool drives(const AccessPath& path, std::size_t filter) {
  return filter == path.filter || (path.with_status && filter == kStatusFilter);
}

// Which conditions a WHERE clause holds: the counters' dimensions (history_counts), or the
// driving columns of the path alone, or those and every other filter column as a residual.
// A residual condition names its column even when its value is NULL, and a column the index
// lacks makes MariaDB read every row the index walks (measured: 30,073 buffer-pool reads for an
// unfiltered offset of 10,000 with three NULL residuals, 10 without): so index-only reads (the
// deferred join's ids, an address's count) have a statement without residuals, used whenever
// no other filter is set.
enum class Conditions { kCounters, kDriving, kDrivingAndResiduals };

// "a = ? AND status = ? AND (? IS NULL OR b = ?) AND ...": the driving columns, then (with
// residuals) every other filter column. params gets the values in placeholder order.
std::string where_clause(const AccessPath& path, const HistoryFilter* filter, Params& params,
                         Conditions which) {
  const bool counters = which == Conditions::kCounters;
  std::string sql;
  auto add = [&sql](const std::string& condition) {
    sql += sql.empty() ? " WHERE " : " AND ";
    sql += condition;
  };
  for (std::size_t i = 0; i < kHistoryFilterCount; ++i) {
    if (counters || !drives(path, i)) continue;
    add(std::string(kHistoryFilters[i].column) + " = ?");
    if (filter) params.push_back(filter->values[i]);
  }
  if (which == Conditions::kDriving) return sql;
  for (std::size_t i = 0; i < kHistoryFilterCount; ++i) {
    if (counters ? !counted(i) : drives(path, i)) continue;
    add("(? IS NULL OR " + std::string(kHistoryFilters[i].column) + " = ?)");
    if (filter) {
      params.push_back(filter->values[i]);
      params.push_back(filter->values[i]);
    }
  }
  return sql;
}

std::string forced(std::string_view index) { return " FORCE INDEX (" + std::string(index) + ")"; }

std::string order_by(domain::SortOrder order, std::string_view id) {
  return " ORDER BY " + std::string(id) +
         (order == domain::SortOrder::kAscending ? " ASC" : " DESC") + " LIMIT ? OFFSET ?";
}

const std::string& record_select_list() {
  static const std::string list = select_list<HistoryRecord>(kRecordColumns);
  return list;
}

// True when a filter is set that the path does not drive.
bool has_residuals(const AccessPath& path, const HistoryFilter& filter) {
  for (std::size_t i = 0; i < kHistoryFilterCount; ++i) {
    if (!drives(path, i) && filter.is_set(i)) return true;
  }
  return false;
}

Conditions index_conditions(bool residuals) {
  return residuals ? Conditions::kDrivingAndResiduals : Conditions::kDriving;
}

HistoryStatement count_of(const AccessPath& path, const HistoryFilter* filter, bool residuals) {
  HistoryStatement s;
  // Exact either way: the counter rows are kept by triggers in the same transactions as history.
  if (path.total == TotalSource::kCounters) {
    s.sql = "SELECT COALESCE(SUM(records), 0) FROM history_counts" +
            where_clause(path, filter, s.params, Conditions::kCounters);
  } else if (path.total == TotalSource::kAddressCounters && !residuals) {
    // The driving values are the address, then the status (kHistoryFilters' order).
    where_clause(path, filter, s.params, Conditions::kDriving);
    s.sql =
        "SELECT COALESCE(SUM(records), 0) FROM history_address_counts WHERE address_column = '" +
        std::string(path.column) + "' AND address = ?" +
        (path.with_status ? " AND status = ?" : "");
  } else {
    s.sql = "SELECT COUNT(*) FROM history" + forced(path.index) +
            where_clause(path, filter, s.params, index_conditions(residuals));
  }
  return s;
}

// The direct form carries the residuals only when a filter beyond the path's is set: MariaDB sets
// every condition up again on each execution, unused or not (the 12 `(? IS NULL OR ...)` pairs
// were most of its CPU on an unfiltered first page). It also carries the list's total as its
// last column (an uncorrelated subquery, evaluated once): a page near the start, the pages
// clients ask for most, is one round trip, not a count and then a page.
HistoryStatement page_of(const AccessPath& path, const HistoryFilter* filter,
                         domain::SortOrder order, PageForm form, bool residuals) {
  HistoryStatement s;
  if (form == PageForm::kDirect) {
    HistoryStatement total = count_of(path, filter, residuals);
    s.params = std::move(total.params);
    s.sql = "SELECT " + record_select_list() + ", (" + total.sql + ") FROM history h" +
            forced(path.index) + where_clause(path, filter, s.params, index_conditions(residuals)) +
            order_by(order, "h.id");
    return s;
  }
  const std::string where = where_clause(path, filter, s.params, index_conditions(residuals));
  const std::string_view index = path.column.empty() ? kNarrowIdIndex : path.index;
  // STRAIGHT_JOIN: the page's ids first, then each row by its primary key, whatever the
  // statistics say about the tables' sizes.
  s.sql = "SELECT STRAIGHT_JOIN " + record_select_list() + " FROM (SELECT id FROM history" +
          forced(index) + where + order_by(order, "id") + ") p JOIN history h" + forced("PRIMARY") +
          " ON h.id = p.id";
  return s;
}

}  // namespace

std::span<const Column<HistoryRecord>> history_record_columns() { return kRecordColumns; }

std::span<const AccessPath> history_access_paths() { return kPaths; }

const AccessPath& choose_access_path(const HistoryFilter& filter) {
  for (const auto& path : kPaths) {
    if (path.filter == kNoFilter) return path;
    if (filter.is_set(path.filter) && (!path.with_status || filter.is_set(kStatusFilter))) {
      return path;
    }
  }
  return kPaths.back();
}

HistoryStatement count_statement(const AccessPath& path, const HistoryFilter& filter) {
  return count_of(path, &filter, has_residuals(path, filter));
}

HistoryStatement page_statement(const AccessPath& path, const HistoryFilter& filter,
                                domain::SortOrder order, PageForm form) {
  return page_of(path, &filter, order, form, has_residuals(path, filter));
}

std::string by_hash_statement() {
  return "SELECT " + record_select_list() + " FROM history h WHERE h.hash = ?";
}

std::vector<std::string> all_history_statements() {
  std::vector<std::string> all{by_hash_statement()};
  auto add = [&all](std::string sql) {
    if (std::find(all.begin(), all.end(), sql) == all.end()) all.push_back(std::move(sql));
  };
  for (const auto& path : kPaths) {
    for (bool residuals : {false, true}) {
      add(count_of(path, nullptr, residuals).sql);
      for (auto order : {domain::SortOrder::kAscending, domain::SortOrder::kDescending}) {
        for (auto form : {PageForm::kDirect, PageForm::kDeferred}) {
          add(page_of(path, nullptr, order, form, residuals).sql);
        }
      }
    }
  }
  return all;
}

}  // namespace connector::db
