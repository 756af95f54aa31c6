#include "json/history_writer.h"

#include <stdexcept>
#include <string>

#include "chain/amount.h"

namespace connector::json {
namespace {

using domain::HistoryRecord;

// Not-yet-recorded amounts stay "".
std::string amount(const std::string& base_units, int decimals) {
  return base_units.empty() ? std::string() : chain::format_units(base_units, decimals);
}

template <typename T>
const T& require(const T* item, const char* what) {
  if (item == nullptr)
    throw std::logic_error(std::string("a history record names an unknown ") + what);
  return *item;
}

void write_chain(JsonWriter& w, std::string_view side, const domain::Chain& chain) {
  const std::string prefix(side);
  member(w, prefix + "_slug", chain.slug);
  member(w, prefix + "_network", chain.network);
  member_as_string(w, prefix + "_chain_id", chain.chain_id);
  member(w, prefix + "_base_chain", chain.base_chain);
}

}  // namespace

std::string_view status_message(const HistoryRecord& record) {
  if (!record.status_message.empty()) return record.status_message;
  if (record.status == "Deposit")
    return "The deposit was seen on the source chain and awaits confirmation.";
  if (record.status == "Pending")
    return "The deposit is confirmed and the payout on the destination chain is under way.";
  if (record.status == "Confirmed")
    return "The transfer is complete: the payout is confirmed on the destination chain.";
  return "The transfer could not be completed; contact support with this record's hash.";
}

bool covers(const domain::ReferenceData& data, const HistoryRecord& r) {
  return data.chain_by_ref(r.source_chain) && data.chain_by_ref(r.destination_chain) &&
         data.asset_by_id(r.source_asset_id) && data.asset_by_id(r.destination_asset_id);
}

void write_history_record(JsonWriter& w, const HistoryRecord& r, const domain::ReferenceData& data,
                          bool with_status_message) {
  const auto& sa = require(data.asset_by_id(r.source_asset_id), "asset");
  const auto& da = require(data.asset_by_id(r.destination_asset_id), "asset");
  w.StartObject();
  member(w, "id", r.id);
  member(w, "hash", r.hash);
  member_uint(w, "pair_id", r.pair_id);
  write_chain(w, "source", require(data.chain_by_ref(r.source_chain), "chain"));
  write_chain(w, "destination", require(data.chain_by_ref(r.destination_chain), "chain"));
  member(w, "source_deposit_address", r.source_deposit_address);
  member(w, "source_sender", r.source_sender);
  member(w, "destination_address", r.destination_address);
  member(w, "source_block_number", r.source_block_number);
  member(w, "destination_block_number", r.destination_block_number);
  member(w, "source_block_timestamp", r.source_block_timestamp);
  member(w, "destination_block_timestamp", r.destination_block_timestamp);
  member(w, "source_tx_hash", r.source_tx_hash);
  member(w, "destination_tx_hash", r.destination_tx_hash);
  member_as_string(w, "source_asset_id", sa.id);
  member_as_string(w, "destination_asset_id", da.id);
  member(w, "source_asset_address", sa.address);
  member(w, "destination_asset_address", da.address);
  member(w, "source_asset_name", sa.name);
  member(w, "destination_asset_name", da.name);
  member(w, "source_asset_symbol", sa.symbol);
  member(w, "destination_asset_symbol", da.symbol);
  member_int(w, "source_asset_decimals", sa.decimals);
  member_int(w, "destination_asset_decimals", da.decimals);
  member(w, "source_asset_type", sa.asset_type);
  member(w, "destination_asset_type", da.asset_type);
  // The fee is charged in the source asset.
  member(w, "source_amount", amount(r.source_amount, sa.decimals));
  member(w, "destination_amount", amount(r.destination_amount, da.decimals));
  member(w, "fee", amount(r.fee, sa.decimals));
  member(w, "status", r.status);
  if (with_status_message) member(w, "status_message", status_message(r));
  w.EndObject();
}

}  // namespace connector::json
