#pragma once
// A chain's state as its node reports it (/v1/ab), in the order of chain_status.status's ENUM
// (sql/migrations/0001), and the canonical spelling of each (kChainStatuses, by value).
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <span>
#include <string_view>

namespace connector::domain {

enum class ChainStatus : std::uint8_t { kOk, kStuck, kOffline, kSyncing };
inline constexpr std::string_view kChainStatuses[] = {"OK", "STUCK", "OFFLINE", "SYNCING"};

// The spellings by value: read_value checks an ENUM index from the database against them.
constexpr std::span<const std::string_view> enum_names(ChainStatus) { return kChainStatuses; }

constexpr std::string_view status_name(ChainStatus status) {
  return kChainStatuses[static_cast<std::size_t>(status)];
}
// The status whose canonical spelling is `name` exactly; nullopt for any other text.
constexpr std::optional<ChainStatus> chain_status(std::string_view name) {
  for (std::size_t i = 0; i < std::size(kChainStatuses); ++i) {
    if (kChainStatuses[i] == name) return static_cast<ChainStatus>(i);
  }
  return std::nullopt;
}

}  // namespace connector::domain
