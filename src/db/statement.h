#pragma once
// Typed statement parameters and result columns, so no read or write binds or reads by position
// by hand. Each lists its parameters in the order of the placeholders (Params), and the
// columns of a row type once (a Column table): the table writes the SELECT list and reads each
// row, so the two can never drift apart.
#include <cppconn/resultset.h>

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

namespace connector::db {

// One placeholder's value: NULL, text or an unsigned integer.
using Param = std::variant<std::monostate, std::string, std::uint64_t>;
using Params = std::vector<Param>;

// An ENUM index the code has no value for: a schema newer than the code (db/schema_enums.h).
class UnknownEnumValue : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The value of a column as a C++ type; NULL reads as "" or 0. An enum is read from a MariaDB
// ENUM selected as its index (`column + 0`, 1 for the first value): the C++ enum lists the
// same values in the same order, from 0 (enum_names(T), found next to the enum; a test holds
// them to the schema), and any other index throws.
template <typename T>
T read_value(sql::ResultSet& rs, int column) {
  if constexpr (std::is_enum_v<T>) {
    const std::uint64_t index = rs.getUInt64(column);
    const auto names = enum_names(T{});
    if (index == 0 || index > names.size()) {
      throw UnknownEnumValue("ENUM index " + std::to_string(index) + " in column " +
                             std::to_string(column) + " has no value in the code (" +
                             std::to_string(names.size()) + " known): a schema newer than it");
    }
    return static_cast<T>(index - 1);
  } else if constexpr (std::is_same_v<T, std::string>) {
    // Connector/C++ reads NULL as "". The text is moved out of the SQLString the driver made
    // (its only copy): one allocation per long text column, not two.
    sql::SQLString text = rs.getString(column);
    return std::move(const_cast<std::string&>(text.asStdString()));
  } else if constexpr (std::is_same_v<T, bool>) {
    return rs.getBoolean(column);
  } else if constexpr (std::is_signed_v<T>) {
    static_assert(std::is_integral_v<T>, "unsupported column type");
    return static_cast<T>(rs.getInt64(column));
  } else {
    static_assert(std::is_integral_v<T>, "unsupported column type");
    return static_cast<T>(rs.getUInt64(column));
  }
}

// One column of a row type: its SQL expression and how its value lands in the row.
template <typename Row>
struct Column {
  std::string_view expression;
  void (*read)(sql::ResultSet& rs, int column, Row& row);
};

namespace detail {
template <typename C, typename T>
C class_of(T C::*);
template <typename C, typename T>
T member_of(T C::*);
}  // namespace detail

// The column that reads into a data member: field<&Row::name>("t.name").
template <auto Member>
constexpr auto field(std::string_view expression) {
  using Row = decltype(detail::class_of(Member));
  using T = decltype(detail::member_of(Member));
  return Column<Row>{expression, [](sql::ResultSet& rs, int column, Row& row) {
                       row.*Member = read_value<T>(rs, column);
                     }};
}

// "a, b, c": the SELECT list of a column table.
template <typename Row>
std::string select_list(std::span<const Column<Row>> columns) {
  std::string list;
  for (const auto& c : columns) {
    if (!list.empty()) list += ", ";
    list += c.expression;
  }
  return list;
}

// The current row of rs, read through its column table.
template <typename Row>
Row read_row(sql::ResultSet& rs, std::span<const Column<Row>> columns) {
  Row row{};
  int index = 1;
  for (const auto& c : columns) c.read(rs, index++, row);
  return row;
}

}  // namespace connector::db
