#include "admin/import_entry.h"

#include <algorithm>
#include <cctype>
#include <stdexcept>

#include "chain/address.h"
#include "chain/amount.h"
#include "chain/bytes.h"

namespace connector::admin {

ImportEntry::ImportEntry(const rapidjson::Value& value, std::string where)
    : value_(value), where_(std::move(where)) {
  if (!value.IsObject()) throw ImportError(where_ + ": must be an object");
}

void ImportEntry::fail(std::string_view field, std::string_view message) const {
  throw ImportError(where_ + "." + std::string(field) + ": " + std::string(message));
}

std::string ImportEntry::text(const char* field, bool required) const {
  const auto it = value_.FindMember(field);
  if (it == value_.MemberEnd() || it->value.IsNull()) {
    if (required) fail(field, "is required");
    return {};
  }
  if (!it->value.IsString()) fail(field, "must be a string");
  std::string out(it->value.GetString(), it->value.GetStringLength());
  if (required && out.empty()) fail(field, "must not be empty");
  if (out.find('\0') != std::string::npos) fail(field, "must not contain NUL");
  return out;
}

std::uint64_t ImportEntry::integer(const char* field) const {
  const auto it = value_.FindMember(field);
  if (it == value_.MemberEnd()) fail(field, "is required");
  if (it->value.IsUint64()) return it->value.GetUint64();
  if (!it->value.IsString()) fail(field, "must be an unsigned integer");
  return parse_integer(field, text(field));
}

std::string ImportEntry::optional_integer_text(const char* field) const {
  if (!has(field)) return {};
  const auto& v = value_[field];
  if (v.IsUint64()) return std::to_string(v.GetUint64());
  const std::string raw = text(field, false);
  return raw.empty() ? raw : std::to_string(parse_integer(field, raw));
}

bool ImportEntry::boolean(const char* field) const {
  const auto it = value_.FindMember(field);
  if (it == value_.MemberEnd() || !it->value.IsBool()) fail(field, "must be true or false");
  return it->value.GetBool();
}

std::string ImportEntry::address(const char* field, bool required) const {
  std::string raw = text(field, required);
  if (raw.empty()) return raw;
  const auto parsed = chain::Address::parse(raw);
  if (!parsed) fail(field, "must be 0x followed by 40 hex digits");
  return parsed->checksummed();
}

std::string ImportEntry::tx_hash(const char* field, bool required) const {
  std::string raw = text(field, required);
  if (raw.empty()) return raw;
  if (!chain::parse_hash32(raw)) fail(field, "must be 0x followed by 64 hex digits");
  return chain::ascii_lower(raw);
}

std::string ImportEntry::amount(const char* field, int decimals, bool required) const {
  std::string raw = text(field, required);
  if (raw.empty()) return raw;
  auto base = chain::parse_units(raw, decimals);
  if (!base) {
    fail(field, "must be a plain decimal amount with at most " + std::to_string(decimals) +
                    " fraction digits, below 2^256");
  }
  return *base;
}

std::uint64_t ImportEntry::fee_percent(const char* field) const {
  const auto parsed = chain::parse_fee_percent(text(field));
  if (!parsed) fail(field, "must be a decimal from 0 to 10000 with at most 6 fraction digits");
  return *parsed;
}

std::uint64_t ImportEntry::parse_integer(const char* field, const std::string& raw) const {
  const auto canonical = chain::canonical_base_units(raw);
  if (!canonical || canonical->size() > 20) fail(field, "must be an unsigned integer");
  try {
    return std::stoull(*canonical);
  } catch (const std::out_of_range&) {
    fail(field, "is too large");
  }
}

}  // namespace connector::admin
