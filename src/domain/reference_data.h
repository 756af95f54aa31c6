#pragma once
// The deployment's reference data: chains, assets, connects and pairs. Changes rarely, so the
// worker holds a refreshed copy in memory (db::RefreshedReference, db/refreshed_reference.h)
// and validates against it.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "chain/address.h"
#include "chain/bytes.h"

namespace connector::domain {

// The values of chains.base_chain and assets.asset_type, in the schema's ENUM order.
inline constexpr std::string_view kBaseChains[] = {"MainBase", "SideBase"};
inline constexpr std::string_view kAssetTypes[] = {"Coin", "ERC-20", "NRC-6", "BRC-20"};

struct Chain {
  std::uint16_t ref = 0;  // the row id, what other tables point at
  std::string slug;
  std::string network;
  std::uint64_t chain_id = 0;
  std::string base_chain;  // MainBase or SideBase
  std::optional<chain::Address> deposit_factory;
  std::optional<chain::Hash32> deposit_init_code_hash;

  bool is_main_base() const { return base_chain == kBaseChains[0]; }
};

struct Asset {
  std::uint64_t id = 0;
  std::uint16_t chain_ref = 0;
  std::string address;  // EIP-55, or empty for the native coin
  std::string name;
  std::string symbol;
  int decimals = 18;
  std::string asset_type;
};

// The settings of one direction of a pair. Amounts are canonical base units of the direction's
// source asset.
struct DirectionSettings {
  std::string min_deposit_amount;
  std::uint64_t fee_percent_millionths = 0;
  std::string fee_min_amount;
  std::string auto_confirm_deposit_amount;
  bool disabled = false;
};

struct Pair {
  std::uint64_t id = 0;
  std::uint64_t asset_a_id = 0;
  std::uint64_t asset_b_id = 0;
  DirectionSettings a2b;
  DirectionSettings b2a;
};

struct Connect {
  std::uint16_t chain_a = 0;
  std::uint16_t chain_b = 0;
};

struct HistoryRecord;  // history.h

struct ReferenceData {
  std::vector<Chain> chains;      // in id order
  std::vector<Asset> assets;      // in id order
  std::vector<Connect> connects;  // in id order
  std::vector<Pair> pairs;        // in id order

  const Chain* chain_by_slug(std::string_view slug) const;
  const Chain* chain_by_ref(std::uint16_t ref) const;
  const Asset* asset_by_id(std::uint64_t id) const;
  bool connected(std::uint16_t chain_x, std::uint16_t chain_y) const;
  // True when this holds every chain and asset the record names.
  bool covers(const HistoryRecord& record) const;
};

}  // namespace connector::domain
