#pragma once
// The filters of /v1/history, one row each. Everything else about a filter comes from its row:
// the endpoint's query parameter (api/history.cpp: its name, its validator by kind, its echo),
// its value's place in HistoryFilter, the condition every history statement holds on its
// column, and, for a filter selective enough to drive a read, its access path
// (db/history_statements.cpp). Adding a filter: its row, its index's migration, its tests
// (CONTRIBUTING.md).
#include <array>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <stdexcept>
#include <string_view>
#include <variant>

#include "db/statement.h"

namespace connector::db {

// What a filter's values are (the endpoint validates each kind), and how they are bound.
enum class FilterKind : std::uint8_t {
  kAddress,  // an address, 0x and 40 hex digits; bound in lower case
  kChain,    // a chain of this deployment, by slug; bound as its chains.id
  kId,       // an unsigned 64-bit id
  kTxHash,   // a transaction hash, 0x and 64 hex digits; bound in lower case
  kStatus,   // a transfer status; bound as its name (history.status's ENUM value)
};

// One filter: a query parameter of /v1/history matching one history column with "=", and, when
// it is selective enough to drive a read, the index it drives it by (forced, so a plan never
// depends on statistics).
struct HistoryFilterSpec {
  std::string_view param;  // the query parameter
  FilterKind kind;
  std::string_view echo;    // the member of the answer that echoes it ("" when not echoed)
  std::string_view column;  // the history column it matches
  // Its place among the access paths, the most selective first: a read is driven by the first
  // path whose filters are all set (spaced by 10, so one fits in between). 0: the filter drives
  // no read, it is only ever a residual condition.
  int rank = 0;
  std::string_view index = {};
  // The (column, status) index, taken instead when the status is set too ("" when none).
  std::string_view status_index = {};
};

// In the order the endpoint checks and echoes them and the statements bind them.
// param, kind, echo, column, rank, index, (column, status) index
inline constexpr HistoryFilterSpec kHistoryFilters[] = {
    {"source_deposit_address", FilterKind::kAddress, "source_deposit_address",
     "source_deposit_address", 30, "ix_history_source_deposit_address",
     "ix_history_source_deposit_address_status"},
    {"source_sender", FilterKind::kAddress, "source_sender", "source_sender", 50,
     "ix_history_source_sender", "ix_history_source_sender_status"},
    {"source_blockchain", FilterKind::kChain, "source_blockchain", "source_chain", 90,
     "ix_history_source_chain", "ix_history_source_chain_status"},
    {"source_asset_id", FilterKind::kId, "source_asset_id", "source_asset_id", 70,
     "ix_history_source_asset"},
    {"source_tx_hash", FilterKind::kTxHash, "", "source_tx_hash", 10, "ix_history_source_tx_hash"},
    {"destination_address", FilterKind::kAddress, "destination_address", "destination_address", 40,
     "ix_history_destination_address", "ix_history_destination_address_status"},
    {"destination_blockchain", FilterKind::kChain, "destination_blockchain", "destination_chain",
     100, "ix_history_destination_chain", "ix_history_destination_chain_status"},
    {"destination_asset_id", FilterKind::kId, "destination_asset_id", "destination_asset_id", 80,
     "ix_history_destination_asset"},
    {"destination_tx_hash", FilterKind::kTxHash, "", "destination_tx_hash", 20,
     "ix_history_destination_tx_hash"},
    {"pair_id", FilterKind::kId, "pairId", "pair_id", 60, "ix_history_pair",
     "ix_history_pair_status"},
    {"status", FilterKind::kStatus, "status", "status", 110, "ix_history_status"},
};
inline constexpr std::size_t kHistoryFilterCount = std::size(kHistoryFilters);

// The position in kHistoryFilters of the filter whose parameter is `param`; throws
// std::logic_error for any other name (a compile error where it is a constant).
constexpr std::size_t history_filter(std::string_view param) {
  for (std::size_t i = 0; i < kHistoryFilterCount; ++i) {
    if (kHistoryFilters[i].param == param) return i;
  }
  throw std::logic_error("not a history filter");
}

// A request's filters: each one's value as the statements bind it (FilterKind), in the order
// of kHistoryFilters; NULL when unused.
struct HistoryFilter {
  std::array<Param, kHistoryFilterCount> values;

  Param& operator[](std::string_view param) { return values[history_filter(param)]; }
  const Param& operator[](std::string_view param) const { return values[history_filter(param)]; }
  bool is_set(std::size_t filter) const {
    return !std::holds_alternative<std::monostate>(values[filter]);
  }
};

}  // namespace connector::db
