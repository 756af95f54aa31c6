#pragma once
// A history record as the database reads it (db/history_reads.h), and the transfer states. (The
// filters of /v1/history are db/history_filters.h.)
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace connector::domain {

enum class SortOrder { kAscending, kDescending };

// The four transfer states, in the order of history.status's ENUM (sql/migrations/0001), and
// their canonical spelling (kHistoryStatuses, by value).
enum class HistoryStatus : std::uint8_t { kDeposit, kPending, kConfirmed, kError };
inline constexpr std::string_view kHistoryStatuses[] = {"Deposit", "Pending", "Confirmed", "Error"};

// The spellings by value: read_value checks an ENUM index from the database against them.
constexpr std::span<const std::string_view> enum_names(HistoryStatus) { return kHistoryStatuses; }

constexpr std::string_view status_name(HistoryStatus status) {
  return kHistoryStatuses[static_cast<std::size_t>(status)];
}
// The status whose canonical spelling is `name` exactly; nullopt for any other text.
constexpr std::optional<HistoryStatus> history_status(std::string_view name) {
  for (std::size_t i = 0; i < std::size(kHistoryStatuses); ++i) {
    if (kHistoryStatuses[i] == name) return static_cast<HistoryStatus>(i);
  }
  return std::nullopt;
}
// Confirmed and Error never change again.
constexpr bool is_final(HistoryStatus status) {
  return status == HistoryStatus::kConfirmed || status == HistoryStatus::kError;
}

// Values the nodes have not recorded yet are empty strings. Amounts are canonical base units.
struct HistoryRecord {
  std::uint64_t id = 0;
  std::string hash;
  std::uint64_t pair_id = 0;
  // Chains and assets by reference: rendered from the refreshed reference data, so reading
  // a record joins nothing.
  std::uint16_t source_chain = 0, destination_chain = 0;  // chains.id
  std::uint64_t source_asset_id = 0, destination_asset_id = 0;
  std::string source_deposit_address, source_sender, destination_address;
  std::string source_block_number, destination_block_number;
  std::string source_block_timestamp, destination_block_timestamp;
  std::string source_tx_hash, destination_tx_hash;
  std::string source_amount, destination_amount, fee;
  HistoryStatus status = HistoryStatus::kDeposit;
  std::string status_message;  // empty when the nodes wrote none
};

}  // namespace connector::domain
