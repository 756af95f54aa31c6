#pragma once
// One entry of an import document (a JSON object), read field by field: each reader checks
// its field's form and returns it canonical, or throws an ImportError naming the entry and the
// field ("history[12].source_amount: ...").
#include <rapidjson/document.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "admin/import_document.h"

namespace connector::admin {

class ImportEntry {
 public:
  // `where` is the entry's place in the document ("history[3]"); value must be an object.
  ImportEntry(const rapidjson::Value& value, std::string where);

  [[noreturn]] void fail(std::string_view field, std::string_view message) const;

  bool has(const char* field) const { return value_.HasMember(field); }

  // A string member; `required` members must be present and non-empty.
  std::string text(const char* field, bool required = true) const;
  // An unsigned integer given as a JSON number or as a decimal string (as the API prints ids).
  std::uint64_t integer(const char* field) const;
  // Like integer(), but "" or absent means "not recorded yet".
  std::string optional_integer_text(const char* field) const;
  bool boolean(const char* field) const;
  // An address, EIP-55 checksummed.
  std::string address(const char* field, bool required = true) const;
  // A 32-byte hash, lower-case.
  std::string tx_hash(const char* field, bool required = true) const;
  // Whole units -> base units of an asset with `decimals`.
  std::string amount(const char* field, int decimals, bool required = true) const;
  // A fee percent -> millionths of a percent.
  std::uint64_t fee_percent(const char* field) const;

  const std::string& where() const { return where_; }

 private:
  std::uint64_t parse_integer(const char* field, const std::string& raw) const;

  const rapidjson::Value& value_;
  std::string where_;
};

}  // namespace connector::admin
