#include "db/history_statements.h"

#include <algorithm>
#include <optional>

namespace connector::db {
namespace {

using domain::HistoryFilter;
using domain::HistoryRecord;

// Chains and assets come from the reference snapshot when rendering: a record joins nothing.
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

template <typename T>
Param param_of(const std::optional<T>& value) {
  if (!value) return std::monostate{};
  if constexpr (std::is_same_v<T, std::string>) {
    return *value;
  } else if constexpr (std::is_same_v<T, domain::HistoryStatus>) {
    return std::string(domain::status_name(*value));
  } else {
    return static_cast<std::uint64_t>(*value);
  }
}

// A history column a filter names, and the filter's value (NULL when unused).
struct FilterColumn {
  std::string_view column;
  Param (*value)(const HistoryFilter& filter);
  bool counted;  // a dimension of history_counts
};

template <auto Member>
Param filter_value(const HistoryFilter& filter) {
  return param_of(filter.*Member);
}

constexpr FilterColumn kFilterColumns[] = {
    {"source_deposit_address", filter_value<&HistoryFilter::source_deposit_address>, false},
    {"source_sender", filter_value<&HistoryFilter::source_sender>, false},
    {"source_chain", filter_value<&HistoryFilter::source_chain>, true},
    {"source_asset_id", filter_value<&HistoryFilter::source_asset_id>, true},
    {"source_tx_hash", filter_value<&HistoryFilter::source_tx_hash>, false},
    {"destination_address", filter_value<&HistoryFilter::destination_address>, false},
    {"destination_chain", filter_value<&HistoryFilter::destination_chain>, true},
    {"destination_asset_id", filter_value<&HistoryFilter::destination_asset_id>, true},
    {"destination_tx_hash", filter_value<&HistoryFilter::destination_tx_hash>, false},
    {"pair_id", filter_value<&HistoryFilter::pair_id>, true},
    {"status", filter_value<&HistoryFilter::status>, true},
};

// Most selective first: transaction hashes and addresses name a handful of records, a pair,
// asset or chain many, a status a quarter of them. The (column, status) variant of an index
// comes before the plain one, so it is taken whenever the status is set too.
constexpr auto kCounters = TotalSource::kCounters;
constexpr auto kAddressCounters = TotalSource::kAddressCounters;
constexpr auto kIndex = TotalSource::kIndex;
constexpr AccessPath kPaths[] = {
    {"ix_history_source_tx_hash", "source_tx_hash", false, kIndex},
    {"ix_history_destination_tx_hash", "destination_tx_hash", false, kIndex},
    {"ix_history_source_deposit_address_status", "source_deposit_address", true, kAddressCounters},
    {"ix_history_source_deposit_address", "source_deposit_address", false, kAddressCounters},
    {"ix_history_destination_address_status", "destination_address", true, kAddressCounters},
    {"ix_history_destination_address", "destination_address", false, kAddressCounters},
    {"ix_history_source_sender_status", "source_sender", true, kAddressCounters},
    {"ix_history_source_sender", "source_sender", false, kAddressCounters},
    {"ix_history_pair_status", "pair_id", true, kCounters},
    {"ix_history_pair", "pair_id", false, kCounters},
    {"ix_history_source_asset", "source_asset_id", false, kCounters},
    {"ix_history_destination_asset", "destination_asset_id", false, kCounters},
    {"ix_history_source_chain_status", "source_chain", true, kCounters},
    {"ix_history_source_chain", "source_chain", false, kCounters},
    {"ix_history_destination_chain_status", "destination_chain", true, kCounters},
    {"ix_history_destination_chain", "destination_chain", false, kCounters},
    {"ix_history_status", "status", false, kCounters},
    {"PRIMARY", "", false, kCounters},
};

// Every address path's counters are kept by history_address_counts, whose ENUM names them.
constexpr bool address_counters_known() {
  for (const auto& path : kPaths) {
    if (path.total == kAddressCounters &&
        std::find(std::begin(kCountedAddressColumns), std::end(kCountedAddressColumns),
                  path.column) == std::end(kCountedAddressColumns)) {
      return false;
    }
  }
  return true;
}
static_assert(address_counters_known(),
              "an address path that history_address_counts does not count");
// The unfiltered list's deferred join skips its offset on the narrowest index in id order.
constexpr std::string_view kNarrowIdIndex = "ix_history_id";

const FilterColumn& filter_column(std::string_view column) {
  return *std::find_if(std::begin(kFilterColumns), std::end(kFilterColumns),
                       [&](const FilterColumn& c) { return c.column == column; });
}

bool is_set(std::string_view column, const HistoryFilter& filter) {
  return !std::holds_alternative<std::monostate>(filter_column(column).value(filter));
}

bool drives(const AccessPath& path, std::string_view column) {
  return column == path.column || (path.with_status && column == "status");
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
  for (const auto& c : kFilterColumns) {
    if (counters || !drives(path, c.column)) continue;
    add(std::string(c.column) + " = ?");
    if (filter) params.push_back(c.value(*filter));
  }
  if (which == Conditions::kDriving) return sql;
  for (const auto& c : kFilterColumns) {
    if (counters ? !c.counted : drives(path, c.column)) continue;
    add("(? IS NULL OR " + std::string(c.column) + " = ?)");
    if (filter) {
      params.push_back(c.value(*filter));
      params.push_back(c.value(*filter));
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
  return std::any_of(
      std::begin(kFilterColumns), std::end(kFilterColumns),
      [&](const FilterColumn& c) { return !drives(path, c.column) && is_set(c.column, filter); });
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
    // The driving values are the address, then the status (kFilterColumns' order).
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

const AccessPath& choose_access_path(const HistoryFilter& filter) {
  for (const auto& path : kPaths) {
    if (path.column.empty()) return path;
    if (is_set(path.column, filter) && (!path.with_status || is_set("status", filter))) {
      return path;
    }
  }
  return kPaths[std::size(kPaths) - 1];
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
