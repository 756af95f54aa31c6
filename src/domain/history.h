#pragma once
// A history record as the store reads it, and the filters of /v1/history.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace connector::domain {

enum class SortOrder { kAscending, kDescending };

// The four transfer states, in their canonical spelling.
inline constexpr std::string_view kHistoryStatuses[] = {"Deposit", "Pending", "Confirmed", "Error"};

// Values the nodes have not recorded yet are empty strings. Amounts are canonical base units.
struct HistoryRecord {
  std::string id;
  std::string hash;
  std::uint64_t pair_id = 0;
  // Chains and assets by reference: rendered from the in-memory reference snapshot, so reading
  // a record joins nothing.
  std::uint16_t source_chain = 0, destination_chain = 0;  // chains.id
  std::uint64_t source_asset_id = 0, destination_asset_id = 0;
  std::string source_deposit_address, source_sender, destination_address;
  std::string source_block_number, destination_block_number;
  std::string source_block_timestamp, destination_block_timestamp;
  std::string source_tx_hash, destination_tx_hash;
  std::string source_amount, destination_amount, fee;
  std::string status;
  std::string status_message;  // empty when the nodes wrote none
};

// Validated filters; unset members are unused. Addresses and hashes match in any case.
struct HistoryFilter {
  std::optional<std::string> source_deposit_address;
  std::optional<std::string> source_sender;
  std::optional<std::uint16_t> source_chain;  // chains.id
  std::optional<std::uint64_t> source_asset_id;
  std::optional<std::string> source_tx_hash;
  std::optional<std::string> destination_address;
  std::optional<std::uint16_t> destination_chain;
  std::optional<std::uint64_t> destination_asset_id;
  std::optional<std::string> destination_tx_hash;
  std::optional<std::uint64_t> pair_id;
  std::optional<std::string> status;
};

}  // namespace connector::domain
