#pragma once
// Validators: each turns one raw parameter value into a typed value or throws an ApiError 400
// naming the parameter. Messages never echo the value (it may be 4 kB of anything), except
// where the contract shows a corrected form.
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "api/endpoints.h"
#include "chain/address.h"
#include "domain/history.h"
#include "domain/reference_data.h"
#include "http/query_string.h"

namespace connector::api {

inline constexpr std::uint32_t kDefaultPageSize = 20;
inline constexpr std::uint32_t kMaxPageSize = 100;

// An unsigned decimal integer that fits in 64 bits (leading zeros allowed, no sign).
std::uint64_t parse_uint64(std::string_view name, std::string_view value);

// 0 means the default (20); above 100 is served as 100.
std::uint32_t parse_page_size(std::string_view name, std::string_view value);

// "0x" + 40 hex digits, any case.
chain::Address parse_address(std::string_view name, std::string_view value);

// "0x" + 64 hex digits, any case -> lower case.
std::string parse_tx_hash(std::string_view name, std::string_view value);

// A history record hash: 64 hex digits, any case, with or without "0x" -> lower case, no "0x".
std::string parse_record_hash(std::string_view name, std::string_view value);

// A slug of one of this deployment's chains.
const domain::Chain& parse_slug(std::string_view name, std::string_view value,
                                const domain::ReferenceData& data);

// Deposit, Pending, Confirmed or Error in any case -> the status.
domain::HistoryStatus parse_status(std::string_view name, std::string_view value);

// ASC or DESC in any case.
domain::SortOrder parse_order(std::string_view name, std::string_view value);

// A request's parameters checked against its endpoint's table (EndpointSpec::params): each
// required one present, each present one valid for its kind, so a handler reads typed values.
class ValidParams {
 public:
  // Missing required parameters first (400 missing_parameter, in the table's order), then each
  // value in the table's order (400 invalid_parameter naming it; an absent one with an
  // absent_means is read from that). The reference data is taken once, when the table has a
  // slug, and kept: the chains found stay valid with it.
  static ValidParams check(std::span<const ParamSpec> specs, const http::QueryParams& query,
                           const db::RefreshedReference& reference);

  // The value of the table's parameter `name` as its kind reads it (std::uint64_t, std::uint32_t
  // for a page size, chain::Address, std::string for hashes, const domain::Chain*,
  // domain::HistoryStatus, domain::SortOrder); when absent, the value of its absent_means, or
  // nullopt when it has none.
  template <typename T>
  std::optional<T> get(std::string_view name) const {
    const auto& value = values_[index(name)];
    if (std::holds_alternative<std::monostate>(value)) return std::nullopt;
    return std::get<T>(value);
  }
  // As the client wrote it; "" when absent.
  std::string_view text(std::string_view name) const { return texts_[index(name)]; }
  // The reference data the slugs were found in (nullptr when the table has none).
  const std::shared_ptr<const domain::ReferenceData>& reference() const { return reference_; }
  // Each echoed parameter (ParamSpec::echo) as a member, in the table's order.
  void write_echo(json::JsonWriter& out) const;

 private:
  using Value =
      std::variant<std::monostate, std::uint64_t, std::uint32_t, chain::Address, std::string,
                   const domain::Chain*, domain::HistoryStatus, domain::SortOrder>;
  std::size_t index(std::string_view name) const;  // throws std::logic_error if not in the table

  std::span<const ParamSpec> specs_;
  std::vector<std::string_view> texts_;
  std::vector<Value> values_;
  std::shared_ptr<const domain::ReferenceData> reference_;
};

}  // namespace connector::api
