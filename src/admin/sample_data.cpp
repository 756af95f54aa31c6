#include "admin/sample_data.h"

#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>

#include <array>
#include <random>
#include <vector>

#include "admin/import_document.h"
#include "chain/amount.h"
#include "chain/deposit_address.h"

namespace connector::admin {
namespace {

// Amounts in the sample stay far below 2^128, so 128-bit arithmetic is exact for them.
__extension__ typedef unsigned __int128 Uint128;

std::string to_decimal(Uint128 value) {
  if (value == 0) return "0";
  std::string digits;
  for (; value > 0; value /= 10) digits.insert(digits.begin(), static_cast<char>('0' + value % 10));
  return digits;
}

Uint128 pow10(int exponent) {
  Uint128 result = 1;
  for (int i = 0; i < exponent; ++i) result *= 10;
  return result;
}

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
  int weight;  // share of history records
};

constexpr std::array<SamplePair, 3> kPairs = {{
    {1,
     1,
     2,
     {"1", "10.000000", "0.1", "1000", false},
     {"1", "10.000000", "0.1", "1000", false},
     6},
    {2, 3, 4, {"1", "10.000000", "0.1", "88.45", false}, {"0.5", "0.000000", "0", "1000", true}, 3},
    {3,
     5,
     6,
     {"0.001", "25.000000", "0.00001", "2.5", false},
     {"0.001", "0.000000", "0", "2.5", false},
     1},
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

void write_reference(Writer& w) {
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

class SampleHistory {
 public:
  explicit SampleHistory(std::uint64_t seed) : random_(seed) {
    for (int i = 0; i < 60; ++i) users_.push_back(random_address());
  }

  void write_record(Writer& w, std::uint64_t id) {
    const SamplePair& pair = pick_pair();
    const bool b2a = !pair.b2a.disabled && (pair.a2b.disabled || random_() % 2 == 1);
    const SampleAsset& source = asset(b2a ? pair.asset_b : pair.asset_a);
    const SampleAsset& destination = asset(b2a ? pair.asset_a : pair.asset_b);
    const SampleDirection& settings = b2a ? pair.b2a : pair.a2b;
    const SampleChain& source_chain = kChains[source.chain];
    const SampleChain& destination_chain = kChains[destination.chain];

    // A few busy recipients and many light ones.
    const auto& recipient = users_[random_() % 4 == 0 ? random_() % 3 : random_() % users_.size()];
    const auto deposit = chain::deposit_address(*chain::Address::parse(source_chain.factory),
                                                *chain::parse_hash32(source_chain.init_code_hash),
                                                destination_chain.chain_id, recipient);

    const Uint128 unit = pow10(source.decimals);
    const Uint128 min_deposit = base_units(settings.min_deposit, source.decimals);
    const Uint128 amount = min_deposit + unit * (random_() % 5000) + random_() % unit;
    const Uint128 fee_percent = std::stoull(*chain::parse_units(settings.fee_percent, 6));
    const Uint128 fee_min = base_units(settings.fee_min, source.decimals);
    Uint128 fee = amount * fee_percent / (Uint128{10000} * 1000000);
    if (fee < fee_min) fee = fee_min;

    const std::string status = pick_status();
    const bool paid = status == "Confirmed";
    const bool priced = status != "Deposit";
    const std::uint64_t source_block = 1'200'000 + id * 9 + random_() % 9;
    const std::uint64_t timestamp = 1'700'000'000 + id * 61;
    const std::string tx_hash = random_tx_hash();
    const std::uint64_t tx_index = random_() % 200;

    w.StartObject();
    member(w, "id", std::to_string(id));
    member(w, "hash", history_hash(source_chain.network, source_chain.chain_id, tx_hash, tx_index));
    w.Key("pair_id");
    w.Uint64(pair.id);
    member(w, "source_slug", source_chain.slug);
    member(w, "destination_slug", destination_chain.slug);
    member(w, "source_deposit_address", deposit.checksummed());
    member(w, "source_sender", random_address().checksummed());
    member(w, "destination_address", recipient.checksummed());
    member(w, "source_block_number", std::to_string(source_block));
    member(w, "destination_block_number", paid ? std::to_string(source_block / 2 + 3) : "");
    member(w, "source_block_timestamp", std::to_string(timestamp));
    member(w, "destination_block_timestamp", paid ? std::to_string(timestamp + 61) : "");
    member(w, "source_tx_hash", tx_hash);
    w.Key("source_tx_index");
    w.Uint64(tx_index);
    member(w, "destination_tx_hash", paid ? random_tx_hash() : "");
    member(w, "source_asset_id", std::to_string(source.id));
    member(w, "destination_asset_id", std::to_string(destination.id));
    // Both sides of every sample pair have the same decimals, so the payout is amount - fee.
    member(w, "source_amount", units(amount, source.decimals));
    member(w, "destination_amount", priced ? units(amount - fee, destination.decimals) : "");
    member(w, "fee", priced ? units(fee, source.decimals) : "");
    member(w, "status", status);
    if (status == "Error") member(w, "status_message", "Payout reverted on the destination chain.");
    w.EndObject();
  }

 private:
  static Uint128 base_units(const char* whole_units, int decimals) {
    const std::string digits = *chain::parse_units(whole_units, decimals);
    Uint128 value = 0;
    for (char c : digits) value = value * 10 + static_cast<unsigned>(c - '0');
    return value;
  }

  static std::string units(Uint128 base, int decimals) {
    return chain::format_units(to_decimal(base), decimals);
  }

  const SamplePair& pick_pair() {
    int total = 0;
    for (const auto& p : kPairs) total += p.weight;
    int draw = static_cast<int>(random_() % static_cast<std::uint64_t>(total));
    for (const auto& p : kPairs) {
      if (draw < p.weight) return p;
      draw -= p.weight;
    }
    return kPairs.back();
  }

  std::string pick_status() {
    const auto draw = random_() % 10;
    if (draw < 7) return "Confirmed";
    if (draw < 8) return "Pending";
    if (draw < 9) return "Deposit";
    return "Error";
  }

  chain::Address random_address() {
    chain::Address::Bytes20 bytes;
    for (auto& b : bytes) b = static_cast<std::uint8_t>(random_());
    return chain::Address(bytes);
  }

  std::string random_tx_hash() {
    chain::Hash32 bytes;
    for (auto& b : bytes) b = static_cast<std::uint8_t>(random_());
    return "0x" + chain::to_hex(bytes);
  }

  std::mt19937_64 random_;
  std::vector<chain::Address> users_;
};

}  // namespace

std::string make_sample_document(const SampleOptions& options) {
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  w.SetIndent(' ', 1);
  w.StartObject();
  write_reference(w);
  w.Key("history");
  w.StartArray();
  SampleHistory history(options.seed);
  for (std::uint64_t id = 1; id <= options.history; ++id) history.write_record(w, id);
  w.EndArray();
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize()) + "\n";
}

}  // namespace connector::admin
