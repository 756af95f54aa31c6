#include "db/write_statement.h"

namespace connector::db {
namespace {

// "a, b, c", each name passed through `each`.
template <typename Each>
std::string joined(std::span<const std::string_view> columns, Each each) {
  std::string list;
  for (const auto column : columns) {
    if (!list.empty()) list += ", ";
    list += each(column);
  }
  return list;
}

std::string name_of(std::string_view column) { return std::string(column); }

}  // namespace

std::string insert_sql(std::string_view table, std::span<const std::string_view> columns,
                       std::size_t key_columns, std::size_t rows, OnDuplicate on_duplicate) {
  const std::string row = "(" + joined(columns, [](std::string_view) { return "?"; }) + ")";
  std::string sql = on_duplicate == OnDuplicate::kIgnore ? "INSERT IGNORE INTO " : "INSERT INTO ";
  sql += std::string(table) + " (" + joined(columns, name_of) + ") VALUES ";
  for (std::size_t i = 0; i < rows; ++i) sql += (i == 0 ? "" : ", ") + row;
  if (on_duplicate == OnDuplicate::kUpdate && key_columns < columns.size()) {
    sql += " ON DUPLICATE KEY UPDATE " +
           joined(columns.subspan(key_columns), [](std::string_view column) {
             return std::string(column) + " = VALUE(" + std::string(column) + ")";
           });
  }
  return sql;
}

std::string insert_where_sql(std::string_view table, std::span<const std::string_view> columns,
                             std::string_view condition) {
  const std::string names = joined(columns, name_of);
  const std::string values =
      joined(columns, [](std::string_view column) { return "? AS " + std::string(column); });
  return "INSERT INTO " + std::string(table) + " (" + names + ") SELECT " + names +
         " FROM (SELECT " + values + ") AS new_row WHERE " + std::string(condition);
}

}  // namespace connector::db
