#include "api/params.h"

#include <algorithm>
#include <cctype>
#include <stdexcept>

#include "chain/bytes.h"
#include "http/api_error.h"
#include "json/json_writer.h"

namespace connector::api {
namespace {

using http::invalid_parameter;

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

}  // namespace

std::uint64_t parse_uint64(std::string_view name, std::string_view value) {
  const std::string n(name);
  if (value.empty() ||
      !std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    throw invalid_parameter(n, n + " must be an unsigned decimal integer");
  }
  std::uint64_t result = 0;
  for (char c : value) {
    const std::uint64_t digit = static_cast<std::uint64_t>(c - '0');
    if (result > (UINT64_MAX - digit) / 10) {
      throw invalid_parameter(n, n + " is too large (the maximum is 18446744073709551615)");
    }
    result = result * 10 + digit;
  }
  return result;
}

std::uint32_t parse_page_size(std::string_view name, std::string_view value) {
  const std::uint64_t size = parse_uint64(name, value);
  if (size == 0) return kDefaultPageSize;
  return static_cast<std::uint32_t>(std::min<std::uint64_t>(size, kMaxPageSize));
}

chain::Address parse_address(std::string_view name, std::string_view value) {
  if (auto address = chain::Address::parse(value)) return *address;
  const std::string n(name);
  throw invalid_parameter(n, n + " must be 0x followed by 40 hex digits");
}

std::string parse_tx_hash(std::string_view name, std::string_view value) {
  if (value.size() == 66 && value.starts_with("0x") && chain::is_hex_digits(value.substr(2))) {
    return chain::ascii_lower(value);
  }
  const std::string n(name);
  throw invalid_parameter(n, n + " must be 0x followed by 64 hex digits");
}

std::string parse_record_hash(std::string_view name, std::string_view value) {
  if (value.starts_with("0x") || value.starts_with("0X")) value.remove_prefix(2);
  if (value.size() == 64 && chain::is_hex_digits(value)) return chain::ascii_lower(value);
  const std::string n(name);
  throw invalid_parameter(n, n + " must be 64 hex digits, with or without 0x");
}

const domain::Chain& parse_slug(std::string_view name, std::string_view value,
                                const domain::ReferenceData& data) {
  if (const auto* chain = data.chain_by_slug(value)) return *chain;
  std::string known;
  for (const auto& chain : data.chains) known += (known.empty() ? "" : ", ") + chain.slug;
  const std::string n(name);
  throw invalid_parameter(n, n + " must be the slug of a chain of this service: " + known);
}

domain::HistoryStatus parse_status(std::string_view name, std::string_view value) {
  for (std::size_t i = 0; i < std::size(domain::kHistoryStatuses); ++i) {
    if (iequals(domain::kHistoryStatuses[i], value)) return static_cast<domain::HistoryStatus>(i);
  }
  const std::string n(name);
  throw invalid_parameter(n, n + " must be one of Deposit, Pending, Confirmed, Error");
}

domain::SortOrder parse_order(std::string_view name, std::string_view value) {
  if (iequals(value, "ASC")) return domain::SortOrder::kAscending;
  if (iequals(value, "DESC")) return domain::SortOrder::kDescending;
  const std::string n(name);
  throw invalid_parameter(n, n + " must be ASC or DESC");
}

}  // namespace connector::api

namespace connector::api {
namespace {

using Value =
    std::variant<std::monostate, std::uint64_t, std::uint32_t, chain::Address, std::string,
                 const domain::Chain*, domain::HistoryStatus, domain::SortOrder>;

Value parse(const ParamSpec& spec, std::string_view value, const domain::ReferenceData* data) {
  switch (spec.kind) {
    case ParamKind::kUint64:
      return parse_uint64(spec.name, value);
    case ParamKind::kPageSize:
      return parse_page_size(spec.name, value);
    case ParamKind::kAddress:
      return parse_address(spec.name, value);
    case ParamKind::kTxHash:
      return parse_tx_hash(spec.name, value);
    case ParamKind::kRecordHash:
      return parse_record_hash(spec.name, value);
    case ParamKind::kSlug:
      return &parse_slug(spec.name, value, *data);
    case ParamKind::kHistoryStatus:
      return parse_status(spec.name, value);
    case ParamKind::kSortOrder:
      return parse_order(spec.name, value);
  }
  throw std::logic_error("a parameter kind without a validator");
}

}  // namespace

ValidParams ValidParams::check(std::span<const ParamSpec> specs, const http::QueryParams& query,
                               const db::RefreshedReference& reference) {
  for (const auto& spec : specs) {
    if (spec.required && !query.get(spec.name)) {
      throw http::missing_parameter(std::string(spec.name));
    }
  }
  ValidParams params;
  params.specs_ = specs;
  if (std::any_of(specs.begin(), specs.end(),
                  [](const ParamSpec& s) { return s.kind == ParamKind::kSlug; })) {
    params.reference_ = reference.get();
  }
  for (const auto& spec : specs) {
    const auto value = query.get(spec.name);
    params.texts_.push_back(value.value_or(std::string_view{}));
    const std::string_view read = value.value_or(spec.absent_means);
    params.values_.push_back(read.empty() ? Value{} : parse(spec, read, params.reference_.get()));
  }
  return params;
}

std::size_t ValidParams::index(std::string_view name) const {
  for (std::size_t i = 0; i < specs_.size(); ++i) {
    if (specs_[i].name == name) return i;
  }
  throw std::logic_error("not a parameter of this endpoint: " + std::string(name));
}

void ValidParams::write_echo(json::JsonWriter& out) const {
  for (std::size_t i = 0; i < specs_.size(); ++i) {
    if (specs_[i].echo.empty()) continue;
    const auto* status = std::get_if<domain::HistoryStatus>(&values_[i]);
    json::member(out, specs_[i].echo, status ? domain::status_name(*status) : texts_[i]);
  }
}

}  // namespace connector::api
