#include "json/reference_writer.h"

#include <stdexcept>

#include "chain/amount.h"

namespace connector::json {
namespace {

using domain::ReferenceData;

// The database's foreign keys make a dangling reference a broken database, not a bad request.
template <typename T>
const T& require(const T* item, const char* what) {
  if (item == nullptr) throw std::logic_error(std::string("dangling reference to a ") + what);
  return *item;
}

void write_asset(JsonWriter& w, const domain::Asset& asset, const ReferenceData& data) {
  w.StartObject();
  member_as_string(w, "id", asset.id);
  member(w, "asset", asset.address);
  member(w, "name", asset.name);
  member(w, "symbol", asset.symbol);
  member_int(w, "decimals", asset.decimals);
  member(w, "asset_type", asset.asset_type);
  write_chain_members(w, require(data.chain_by_ref(asset.chain_ref), "chain"));
  w.EndObject();
}

}  // namespace

void write_chain_members(JsonWriter& w, const domain::Chain& chain) {
  member(w, "network", chain.network);
  member_as_string(w, "chain_id", chain.chain_id);
  member(w, "base_chain", chain.base_chain);
  member(w, "slug", chain.slug);
}

void write_chain(JsonWriter& w, const domain::Chain& chain) {
  w.StartObject();
  write_chain_members(w, chain);
  w.EndObject();
}

void write_connect(JsonWriter& w, const domain::Connect& connect, const ReferenceData& data) {
  w.StartObject();
  key(w, "bc1");
  write_chain(w, require(data.chain_by_ref(connect.chain_a), "chain"));
  key(w, "bc2");
  write_chain(w, require(data.chain_by_ref(connect.chain_b), "chain"));
  w.EndObject();
}

void write_pair(JsonWriter& w, const domain::Pair& pair, const ReferenceData& data) {
  const auto& a = require(data.asset_by_id(pair.asset_a_id), "asset");
  const auto& b = require(data.asset_by_id(pair.asset_b_id), "asset");
  const auto& chain_a = require(data.chain_by_ref(a.chain_ref), "chain");
  const auto& chain_b = require(data.chain_by_ref(b.chain_ref), "chain");
  // a2b amounts are in asset A's units, b2a amounts in asset B's.
  auto amount_a = [&](const std::string& base) { return chain::format_units(base, a.decimals); };
  auto amount_b = [&](const std::string& base) { return chain::format_units(base, b.decimals); };

  w.StartObject();
  member_as_string(w, "id", pair.id);
  member_as_string(w, "asset_a_id", pair.asset_a_id);
  member_as_string(w, "asset_b_id", pair.asset_b_id);
  key(w, "asset_a");
  write_asset(w, a, data);
  key(w, "asset_b");
  write_asset(w, b, data);
  member(w, "a2b_min_deposit_amount", amount_a(pair.a2b.min_deposit_amount));
  member(w, "b2a_min_deposit_amount", amount_b(pair.b2a.min_deposit_amount));
  member(w, "a2b_fee_percent", chain::format_fee_percent(pair.a2b.fee_percent_millionths));
  member(w, "b2a_fee_percent", chain::format_fee_percent(pair.b2a.fee_percent_millionths));
  member(w, "a2b_fee_min_amount", amount_a(pair.a2b.fee_min_amount));
  member(w, "b2a_fee_min_amount", amount_b(pair.b2a.fee_min_amount));
  member(w, "a2b_auto_confirm_deposit_amount", amount_a(pair.a2b.auto_confirm_deposit_amount));
  member(w, "b2a_auto_confirm_deposit_amount", amount_b(pair.b2a.auto_confirm_deposit_amount));
  member(w, "connect_pair", chain_a.slug + "-" + chain_b.slug);
  member_bool(w, "a2b_disabled", pair.a2b.disabled);
  member_bool(w, "b2a_disabled", pair.b2a.disabled);
  w.EndObject();
}

}  // namespace connector::json
