#include "json/history_writer.h"

#include <stdexcept>
#include <string>

#include "chain/amount.h"
#include "json/object_text.h"

namespace connector::json {
namespace {

using domain::HistoryRecord;

// An amount in whole units; one not recorded yet stays "". Digits and a point, nothing to
// escape: the schema holds amounts to canonical digits (ck_history_amounts, migration 0001).
void amount(ObjectText& o, std::string_view key, const std::string& base_units, int decimals) {
  if (decimals < 0) throw std::out_of_range("a history record's asset has negative decimals");
  o.string_from(key, [&](std::string& out) {
    if (!base_units.empty()) chain::append_units(out, base_units, decimals);
  });
}

template <typename T>
const T& require(const T* item, const char* what) {
  if (item == nullptr)
    throw std::logic_error(std::string("a history record names an unknown ") + what);
  return *item;
}

// The member names of one side of a transfer.
struct ChainKeys {
  std::string_view slug, network, chain_id, base_chain;
};
constexpr ChainKeys kSourceKeys{"source_slug", "source_network", "source_chain_id",
                                "source_base_chain"};
constexpr ChainKeys kDestinationKeys{"destination_slug", "destination_network",
                                     "destination_chain_id", "destination_base_chain"};

void write_chain(ObjectText& o, const ChainKeys& keys, const domain::Chain& chain) {
  o.string(keys.slug, chain.slug);
  o.string(keys.network, chain.network);
  o.number_as_string(keys.chain_id, chain.chain_id);
  o.string(keys.base_chain, chain.base_chain);
}

}  // namespace

std::string_view status_message(const HistoryRecord& record) {
  if (!record.status_message.empty()) return record.status_message;
  switch (record.status) {
    case domain::HistoryStatus::kDeposit:
      return "The deposit was seen on the source chain and awaits confirmation.";
    case domain::HistoryStatus::kPending:
      return "The deposit is confirmed and the payout on the destination chain is under way.";
    case domain::HistoryStatus::kConfirmed:
      return "The transfer is complete: the payout is confirmed on the destination chain.";
    case domain::HistoryStatus::kError:
      break;
  }
  return "The transfer could not be completed; contact support with this record's hash.";
}

void write_history_record(JsonWriter& w, const HistoryRecord& r, const domain::ReferenceData& data,
                          bool with_status_message) {
  const auto& sa = require(data.asset_by_id(r.source_asset_id), "asset");
  const auto& da = require(data.asset_by_id(r.destination_asset_id), "asset");
  const auto& source = require(data.chain_by_ref(r.source_chain), "chain");
  const auto& destination = require(data.chain_by_ref(r.destination_chain), "chain");
  // The record's text is built in a buffer the thread reuses, then handed to the Writer whole.
  thread_local std::string text;
  text.clear();
  ObjectText o(text);
  o.number_as_string("id", r.id);
  o.string("hash", r.hash);
  o.number("pair_id", std::uint64_t{r.pair_id});
  write_chain(o, kSourceKeys, source);
  write_chain(o, kDestinationKeys, destination);
  o.string("source_deposit_address", r.source_deposit_address);
  o.string("source_sender", r.source_sender);
  o.string("destination_address", r.destination_address);
  o.string("source_block_number", r.source_block_number);
  o.string("destination_block_number", r.destination_block_number);
  o.string("source_block_timestamp", r.source_block_timestamp);
  o.string("destination_block_timestamp", r.destination_block_timestamp);
  o.string("source_tx_hash", r.source_tx_hash);
  o.string("destination_tx_hash", r.destination_tx_hash);
  o.number_as_string("source_asset_id", sa.id);
  o.number_as_string("destination_asset_id", da.id);
  o.string("source_asset_address", sa.address);
  o.string("destination_asset_address", da.address);
  o.string("source_asset_name", sa.name);
  o.string("destination_asset_name", da.name);
  o.string("source_asset_symbol", sa.symbol);
  o.string("destination_asset_symbol", da.symbol);
  o.number("source_asset_decimals", std::int64_t{sa.decimals});
  o.number("destination_asset_decimals", std::int64_t{da.decimals});
  o.string("source_asset_type", sa.asset_type);
  o.string("destination_asset_type", da.asset_type);
  // The fee is charged in the source asset.
  amount(o, "source_amount", r.source_amount, sa.decimals);
  amount(o, "destination_amount", r.destination_amount, da.decimals);
  amount(o, "fee", r.fee, sa.decimals);
  o.string("status", domain::status_name(r.status));
  if (with_status_message) o.string("status_message", status_message(r));
  o.close();
  w.raw(text, rapidjson::kObjectType);
}

void write_record_answer(JsonWriter& w, const HistoryRecord& record,
                         const domain::ReferenceData& data) {
  write_history_record(w, record, data, /*with_status_message=*/true);
}

}  // namespace connector::json
