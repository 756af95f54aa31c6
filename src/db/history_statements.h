#pragma once
// The fixed set of statements that read history. Whatever filters a client combines, a page
// is read through one of a few access paths, each a forced index chosen here by the
// application (never by the optimizer, so plans do not depend on table statistics): the most
// selective filter drives the index range, and every other filter is a bound residual
// condition, `(? IS NULL OR column = ?)`, present in every statement whether used or not. So
// the SQL text depends only on the access path, the order and the page form, never on which
// other filters are set: the number of statements a connection can prepare is fixed
// (all_history_statements()). The filters and their indexes are the rows of
// db/history_filters.h; the access paths are derived from them.
#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "db/history_filters.h"
#include "db/statement.h"
#include "domain/history.h"

namespace connector::db {

// The address columns history_address_counts counts by (its address_column ENUM, in order).
inline constexpr std::string_view kCountedAddressColumns[] = {
    "source_deposit_address", "source_sender", "destination_address"};

// Where the exact total of a path's list comes from.
enum class TotalSource {
  kCounters,         // coarse filters: a sum of history_counts rows
  kAddressCounters,  // one address (and status), nothing else: history_address_counts rows
  kIndex,            // COUNT(*) over the index range (tx hashes)
};
// An address path counts its index range too when another filter is set (count_of()).

// An index that drives a history read: its driving column bound with "=", and for the
// (column, status) indexes the status too. Rows come out in id order within it.
struct AccessPath {
  std::string_view index;
  std::string_view column;  // "" for the unfiltered list
  bool with_status;
  TotalSource total;
  std::size_t filter;  // the driving filter's row in kHistoryFilters (kHistoryFilterCount: none)
};

// The path for these filters: the first, most selective first, whose driving filters are all
// set.
const AccessPath& choose_access_path(const HistoryFilter& filter);
// Every access path, in the order choose_access_path() tries them (derived from
// kHistoryFilters: the statement set's size follows from them, test_history_statements).
std::span<const AccessPath> history_access_paths();

// A page is read directly near the start of a list, with the list's total as one more column
// after the record's, and through a deferred join deeper down (its ids from the index alone,
// then only those rows in full).
enum class PageForm { kDirect, kDeferred };

struct HistoryStatement {
  std::string sql;
  Params params;  // a page statement's LIMIT and OFFSET come after these
};

HistoryStatement count_statement(const AccessPath& path, const HistoryFilter& filter);
HistoryStatement page_statement(const AccessPath& path, const HistoryFilter& filter,
                                domain::SortOrder order, PageForm form);
// Every column of a record, read by the page and by-hash statements.
std::span<const Column<domain::HistoryRecord>> history_record_columns();

// The statement of one record by hash.
std::string by_hash_statement();

// Every statement text the history reads (db/history_reads.cpp) can prepare, each once.
std::vector<std::string> all_history_statements();

}  // namespace connector::db
