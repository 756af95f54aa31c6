#include "admin/sample_data.h"

#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>

#include <array>
#include <random>
#include <vector>

#include "admin/history_generator.h"
#include "admin/import_document.h"
#include "chain/amount.h"
#include "chain/deposit_address.h"

namespace connector::admin {
namespace {

struct SampleChain {
  const char* network;
  std::uint64_t chain_id;
  const char* base_chain;
  const char* slug;
  const char* factory;
  const char* init_code_hash;
};

// Invented forwarder factories and init-code hashes; the API derives addresses from these.
constexpr std::array<SampleChain, 2> kChains = {{
    {"UNITCore", 36888, "MainBase", "unitcore", "0x7f3a1c9e2b4d6f8a0c1e3b5d7f9a2c4e6b8d0f12",
     "0x21c35dbe1b344a2488cf3321d6ce542f8e9f305544ff09e4993a62319a497c1f"},
    {"UNITIoT", 1012, "SideBase", "unitiot", "0x3c5e7a9b1d2f4a6c8e0b2d4f6a8c0e1b3d5f7a9c",
     "0x5b1f8e2d4c6a9b3e7f0d1c2b4a6e8f9d0c3b5a7e9f1d3c5b7a9e0f2d4c6b8a01"},
}};

struct SampleAsset {
  std::uint64_t id;
  int chain;  // index into kChains
  const char* address;
  const char* name;
  const char* symbol;
  int decimals;
  const char* type;
};

constexpr std::array<SampleAsset, 6> kAssets = {{
    {1, 0, "", "UNIT", "UNIT", 18, "Coin"},
    {2, 1, "", "UNIT", "UNIT", 18, "Coin"},
    {3, 0, "0x4287f0b5260f6aeb8dfb8a6483d69a64061ac3a6", "Tether USD", "USDT", 6, "ERC-20"},
    {4, 1, "0xf75da0899c29754ef74ce3558913ed7c58698472", "Tether USD", "USDT", 6, "NRC-6"},
    {5, 0, "0x1534f5b9bf3e8d70bf7571a3fd3bf8ec0cb46ff7", "Wrapped BTC", "WBTC", 8, "ERC-20"},
    {6, 1, "0xfd50d366980362e4a2241099d97185a0bc8db09c", "Wrapped BTC", "WBTC", 8, "NRC-6"},
}};

// Settings of one direction in whole units of its source asset.
struct SampleDirection {
  const char* min_deposit;
  const char* fee_percent;
  const char* fee_min;
  const char* auto_confirm;
  bool disabled;
};

struct SamplePair {
  std::uint64_t id, asset_a, asset_b;
  SampleDirection a2b, b2a;
};

constexpr std::array<SamplePair, 3> kPairs = {{
    {1, 1, 2, {"1", "10.000000", "0.1", "1000", false}, {"1", "10.000000", "0.1", "1000", false}},
    {2, 3, 4, {"1", "10.000000", "0.1", "88.45", false}, {"0.5", "0.000000", "0", "1000", true}},
    {3,
     5,
     6,
     {"0.001", "25.000000", "0.00001", "2.5", false},
     {"0.001", "0.000000", "0", "2.5", false}},
}};

const SampleAsset& asset(std::uint64_t id) { return kAssets[id - 1]; }

std::string checksummed(const char* address) {
  return *address ? chain::Address::parse(address)->checksummed() : std::string();
}

using Writer = rapidjson::PrettyWriter<rapidjson::StringBuffer>;

void member(Writer& w, const char* key, const std::string& value) {
  w.Key(key);
  w.String(value.c_str(), static_cast<rapidjson::SizeType>(value.size()));
}

void write_networks(Writer& w) {
  w.Key("networks");
  w.StartArray();
  for (const auto& c : kChains) {
    w.StartObject();
    member(w, "network", c.network);
    member(w, "chain_id", std::to_string(c.chain_id));
    member(w, "base_chain", c.base_chain);
    member(w, "slug", c.slug);
    member(w, "deposit_factory", checksummed(c.factory));
    member(w, "deposit_init_code_hash", c.init_code_hash);
    w.EndObject();
  }
  w.EndArray();
}

void write_assets(Writer& w) {
  w.Key("assets");
  w.StartArray();
  for (const auto& a : kAssets) {
    w.StartObject();
    member(w, "id", std::to_string(a.id));
    member(w, "asset", checksummed(a.address));
    member(w, "name", a.name);
    member(w, "symbol", a.symbol);
    w.Key("decimals");
    w.Int(a.decimals);
    member(w, "asset_type", a.type);
    member(w, "slug", kChains[a.chain].slug);
    w.EndObject();
  }
  w.EndArray();
}

void write_pairs(Writer& w) {
  w.Key("pairs");
  w.StartArray();
  for (const auto& p : kPairs) {
    w.StartObject();
    member(w, "id", std::to_string(p.id));
    member(w, "asset_a_id", std::to_string(p.asset_a));
    member(w, "asset_b_id", std::to_string(p.asset_b));
    for (const auto& [dir, d] : {std::pair{"a2b", p.a2b}, std::pair{"b2a", p.b2a}}) {
      const std::string prefix(dir);
      member(w, (prefix + "_min_deposit_amount").c_str(), d.min_deposit);
      member(w, (prefix + "_fee_percent").c_str(), d.fee_percent);
      member(w, (prefix + "_fee_min_amount").c_str(), d.fee_min);
      member(w, (prefix + "_auto_confirm_deposit_amount").c_str(), d.auto_confirm);
      w.Key((prefix + "_disabled").c_str());
      w.Bool(d.disabled);
    }
    w.EndObject();
  }
  w.EndArray();
}

void write_chains(Writer& w) {
  w.Key("chains");
  w.StartArray();
  const std::array<std::array<const char*, 4>, 2> supply = {{
      {"unitcore", "OK", "1873221", "987654321.123456789012345678"},
      {"unitiot", "SYNCING", "554120", "12345"},
  }};
  for (const auto& s : supply) {
    w.StartObject();
    member(w, "slug", s[0]);
    member(w, "status", s[1]);
    member(w, "latest_height", s[2]);
    member(w, "supply", s[3]);
    w.EndObject();
  }
  w.EndArray();
}

void write_reference(Writer& w) {
  write_networks(w);
  write_assets(w);
  write_pairs(w);
  write_chains(w);
}

// The sample's reference data as the generator sees it (amounts in base units).
domain::ReferenceData sample_reference() {
  domain::ReferenceData data;
  for (std::size_t i = 0; i < kChains.size(); ++i) {
    const auto& c = kChains[i];
    data.chains.push_back({static_cast<std::uint16_t>(i + 1), c.slug, c.network, c.chain_id,
                           c.base_chain, chain::Address::parse(c.factory),
                           chain::parse_hash32(c.init_code_hash)});
  }
  for (const auto& a : kAssets) {
    data.assets.push_back({a.id, static_cast<std::uint16_t>(a.chain + 1), checksummed(a.address),
                           a.name, a.symbol, a.decimals, a.type});
  }
  auto direction = [](const SampleDirection& d, int decimals) {
    return domain::DirectionSettings{*chain::parse_units(d.min_deposit, decimals),
                                     *chain::parse_fee_percent(d.fee_percent),
                                     *chain::parse_units(d.fee_min, decimals),
                                     *chain::parse_units(d.auto_confirm, decimals), d.disabled};
  };
  for (const auto& p : kPairs) {
    data.pairs.push_back({p.id, p.asset_a, p.asset_b, direction(p.a2b, asset(p.asset_a).decimals),
                          direction(p.b2a, asset(p.asset_b).decimals)});
  }
  return data;
}

// A generated record in the import document's shape: whole units, as the API prints them.
void write_history_row(Writer& w, const HistoryRow& r) {
  const int source_decimals = asset(r.source_asset_id).decimals;
  const int destination_decimals = asset(r.destination_asset_id).decimals;
  auto units = [](const std::string& base, int decimals) {
    return base.empty() ? base : chain::format_units(base, decimals);
  };
  w.StartObject();
  member(w, "id", std::to_string(r.id));
  member(w, "hash", r.hash);
  w.Key("pair_id");
  w.Uint64(r.pair_id);
  member(w, "source_slug", r.source_slug);
  member(w, "destination_slug", r.destination_slug);
  member(w, "source_deposit_address", r.source_deposit_address);
  member(w, "source_sender", r.source_sender);
  member(w, "destination_address", r.destination_address);
  member(w, "source_block_number", r.source_block_number);
  member(w, "destination_block_number", r.destination_block_number);
  member(w, "source_block_timestamp", r.source_block_timestamp);
  member(w, "destination_block_timestamp", r.destination_block_timestamp);
  member(w, "source_tx_hash", r.source_tx_hash);
  w.Key("source_tx_index");
  w.Uint64(r.source_tx_index);
  member(w, "destination_tx_hash", r.destination_tx_hash);
  member(w, "source_asset_id", std::to_string(r.source_asset_id));
  member(w, "destination_asset_id", std::to_string(r.destination_asset_id));
  member(w, "source_amount", units(r.source_amount, source_decimals));
  member(w, "destination_amount", units(r.destination_amount, destination_decimals));
  member(w, "fee", units(r.fee, source_decimals));
  member(w, "status", std::string(domain::status_name(r.status)));
  if (!r.status_message.empty()) member(w, "status_message", r.status_message);
  w.EndObject();
}

}  // namespace

std::string make_sample_document(const SampleOptions& options) {
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  w.SetIndent(' ', 1);
  w.StartObject();
  write_reference(w);
  w.Key("history");
  w.StartArray();
  const auto reference = sample_reference();
  HistoryGenerator generator(reference, options.seed, /*recipients=*/60);
  for (std::uint64_t id = 1; id <= options.history; ++id) {
    write_history_row(w, generator.next(id));
  }
  w.EndArray();
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize()) + "\n";
}

}  // namespace connector::admin
