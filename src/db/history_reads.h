#pragma once
// Reads history: a filtered, counted page, and one record by hash.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "db/connection.h"
#include "db/history_filters.h"
#include "domain/history.h"

namespace connector::db {

struct HistoryPage {
  std::uint64_t total = 0;  // matching records, all pages
  std::vector<domain::HistoryRecord> records;
};

// Page page_id (0-based) of page_size records of the matching set in the given order, and the
// total. A page past the end costs only the count and has no records.
HistoryPage find_history_page(Connection& db, const HistoryFilter& filter, std::uint64_t page_id,
                              std::uint32_t page_size, domain::SortOrder order);

// hash: 64 lower-case hex digits.
std::optional<domain::HistoryRecord> find_history_by_hash(Connection& db, const std::string& hash);

}  // namespace connector::db
