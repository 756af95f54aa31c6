#pragma once
// Reads and validates an import document: the API's own shapes
//   {"networks": [...], "assets": [...], "pairs": [...], "chains": [...], "history": [...],
//    "connects": [...]}
// every key optional, amounts in whole units as the API prints them, plus source_tx_index on
// history records and deposit_factory / deposit_init_code_hash on networks. Nothing is written
// here: the result is a batch of rows ready to write (admin/import_writes.h), or an ImportError
// naming the entry and field ("history[12].source_amount: ...").
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "domain/chain_status.h"
#include "domain/history.h"
#include "domain/reference_data.h"

namespace connector::admin {

class ImportError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct NetworkRow {
  std::string network, slug, base_chain;
  std::uint64_t chain_id = 0;
  std::string deposit_factory;         // EIP-55, or empty
  std::string deposit_init_code_hash;  // 0x + 64 lower-case hex, or empty
};

struct AssetRow {
  std::uint64_t id = 0;
  std::string slug;
  std::string address;  // EIP-55, or empty for the coin
  std::string name, symbol;
  int decimals = 18;
  std::string asset_type;
};

struct ConnectRow {
  std::string slug_a, slug_b;
};

struct PairRow {
  std::uint64_t id = 0, asset_a_id = 0, asset_b_id = 0;
  domain::DirectionSettings a2b, b2a;  // base units
};

struct ChainStatusRow {
  std::string slug;
  domain::ChainStatus status = domain::ChainStatus::kOk;
  std::uint64_t latest_height = 0;
  std::string supply;  // base units
};

// Optional columns are empty strings where the nodes have recorded nothing (NULL).
struct HistoryRow {
  std::uint64_t id = 0;
  std::string hash;
  std::uint64_t pair_id = 0;
  std::string source_slug, destination_slug;
  std::string source_deposit_address, source_sender, destination_address;
  std::string source_block_number, destination_block_number;
  std::string source_block_timestamp, destination_block_timestamp;
  std::string source_tx_hash, destination_tx_hash;
  std::uint64_t source_tx_index = 0;
  std::uint64_t source_asset_id = 0, destination_asset_id = 0;
  std::string source_amount, destination_amount, fee;
  domain::HistoryStatus status = domain::HistoryStatus::kDeposit;
  std::string status_message;
};

struct DepositAccountRow {
  std::string deposit_slug, deposit_address, recipient_slug, recipient_address;
};

struct ImportBatch {
  std::vector<NetworkRow> networks;
  std::vector<AssetRow> assets;
  std::vector<ConnectRow> connects;  // explicit ones and those every pair implies
  std::vector<PairRow> pairs;
  std::vector<ChainStatusRow> chains;
  std::vector<HistoryRow> history;
  std::vector<DepositAccountRow> deposit_accounts;  // the deposit address of every record
};

// Validates text against itself and the data already in the database (`existing`), so a file
// may add history for networks and pairs loaded earlier.
ImportBatch read_import_document(std::string_view text, const domain::ReferenceData& existing);

}  // namespace connector::admin
