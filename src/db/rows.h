#pragma once
// Small helpers to read result-set columns into plain C++ values.
#include <cppconn/resultset.h>

#include <cstdint>
#include <string>

namespace connector::db {

inline std::string text(sql::ResultSet& rs, int column) {
  return rs.isNull(column) ? std::string() : std::string(rs.getString(column));
}
inline std::uint64_t u64(sql::ResultSet& rs, int column) { return rs.getUInt64(column); }

}  // namespace connector::db
