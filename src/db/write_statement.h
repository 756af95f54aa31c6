#pragma once
// Typed writes, the counterpart of statement.h's Column tables: a WriteTable lists a table's
// columns once, each with how its value comes out of a row, and from it come the INSERT's
// column list, its placeholders (one group per row) and the values bound to them, in the same
// order, so no writer binds by position by hand.
//
//   constexpr WriteColumn<Row> kColumns[] = {bind<&Row::id>("id"),
//   bind_or_null<&Row::note>("note")}; constexpr WriteTable<Row> kTable{"t", kColumns, 1};
//   db.execute(insert_sql(kTable, 1, OnDuplicate::kUpdate), params_of(kTable, row));
//
// A value that needs more than the row (a chain's id by its slug) reads a Context the writer
// passes along: WriteColumn<Row, Context> and a column function of (row, context).
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "db/statement.h"

namespace connector::db {

// The context of a table whose values come from the row alone.
struct NoContext {};

// One column of a write: its name and its value for a row.
template <typename Row, typename Context = NoContext>
struct WriteColumn {
  std::string_view column;
  Param (*value)(const Row& row, const Context& context);
};

// A table's write columns. The first key_columns of them name a row (its unique key): an
// upsert updates the others.
template <typename Row, typename Context = NoContext>
struct WriteTable {
  std::string_view table;
  std::span<const WriteColumn<Row, Context>> columns;
  std::size_t key_columns = 0;
};

// A value as a parameter: text as it is, integers and booleans (0/1) as unsigned integers,
// an enum as its name (enum_names(T), the spelling of the database's ENUM, as read_value).
template <typename T>
Param to_param(const T& value) {
  if constexpr (std::is_enum_v<T>) {
    return std::string(enum_names(T{})[static_cast<std::size_t>(value)]);
  } else if constexpr (std::is_same_v<T, std::string>) {
    return value;
  } else {
    static_assert(std::is_integral_v<T>, "unsupported column type");
    return static_cast<std::uint64_t>(value);
  }
}

namespace detail {

// row.*A.*B...: a member, or a member of a member (a pair's a2b.fee_min_amount).
template <auto First, auto... Rest, typename T>
const auto& member_path(const T& object) {
  if constexpr (sizeof...(Rest) == 0) {
    return object.*First;
  } else {
    return member_path<Rest...>(object.*First);
  }
}

// The column bind<>() names: it becomes a WriteColumn of any Context, which it ignores.
template <bool EmptyIsNull, auto... Path>
struct BoundMember {
  std::string_view column;

  template <typename Row, typename Context>
  constexpr operator WriteColumn<Row, Context>() const {  // NOLINT(google-explicit-constructor)
    return {column, [](const Row& row, const Context&) -> Param {
              const auto& value = member_path<Path...>(row);
              if constexpr (EmptyIsNull) {
                if (value.empty()) return std::monostate{};
              }
              return to_param(value);
            }};
  }
};

}  // namespace detail

// The column that writes a data member (or a member's member): bind<&Row::name>("name"),
// bind<&Row::a2b, &Settings::fee>("a2b_fee").
template <auto... Path>
constexpr auto bind(std::string_view column) {
  return detail::BoundMember<false, Path...>{column};
}

// The same for an optional text column: the empty string writes NULL.
template <auto... Path>
constexpr auto bind_or_null(std::string_view column) {
  return detail::BoundMember<true, Path...>{column};
}

// What an INSERT does with a row whose unique key is already stored.
enum class OnDuplicate {
  kFail,    // the statement fails
  kIgnore,  // INSERT IGNORE: the stored row stays
  kUpdate,  // ON DUPLICATE KEY UPDATE: the non-key columns take the new values
};

// "INSERT INTO t (a, b) VALUES (?, ?), (?, ?)" for `rows` rows, with the clause of
// `on_duplicate`.
std::string insert_sql(std::string_view table, std::span<const std::string_view> columns,
                       std::size_t key_columns, std::size_t rows, OnDuplicate on_duplicate);

// "INSERT INTO t (a, b) SELECT a, b FROM (SELECT ? AS a, ? AS b) AS new_row WHERE condition":
// one row, written only when `condition` (which may name new_row.a) holds.
std::string insert_where_sql(std::string_view table, std::span<const std::string_view> columns,
                             std::string_view condition);

template <typename Row, typename Context>
std::vector<std::string_view> column_names(const WriteTable<Row, Context>& table) {
  std::vector<std::string_view> names;
  for (const auto& c : table.columns) names.push_back(c.column);
  return names;
}

template <typename Row, typename Context>
std::string insert_sql(const WriteTable<Row, Context>& table, std::size_t rows,
                       OnDuplicate on_duplicate) {
  return insert_sql(table.table, column_names(table), table.key_columns, rows, on_duplicate);
}

template <typename Row, typename Context>
std::string insert_where_sql(const WriteTable<Row, Context>& table, std::string_view condition) {
  return insert_where_sql(table.table, column_names(table), condition);
}

// Appends the values of one row, in the order of the table's columns.
template <typename Row, typename Context>
void append_params(Params& params, const WriteTable<Row, Context>& table, const Row& row,
                   const Context& context) {
  for (const auto& c : table.columns) params.push_back(c.value(row, context));
}

template <typename Row, typename Context>
Params params_of(const WriteTable<Row, Context>& table, const Row& row, const Context& context) {
  Params params;
  params.reserve(table.columns.size());
  append_params(params, table, row, context);
  return params;
}

template <typename Row>
Params params_of(const WriteTable<Row>& table, const Row& row) {
  return params_of(table, row, NoContext{});
}

}  // namespace connector::db
