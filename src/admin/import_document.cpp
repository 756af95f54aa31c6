#include "admin/import_document.h"

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>

#include <algorithm>
#include <array>
#include <map>
#include <span>

#include "admin/import_entry.h"
#include "chain/amount.h"
#include "chain/bytes.h"
#include "chain/deposit_address.h"
#include "domain/history.h"
#include "domain/history_hash.h"
#include "domain/reference_data.h"

namespace connector::admin {
namespace {

using rapidjson::Value;

// The four networks the interface defines; a deployment has some of them.
struct KnownNetwork {
  std::string_view network;
  std::uint64_t chain_id;
  std::string_view base_chain, slug;
};
constexpr std::array<KnownNetwork, 4> kKnownNetworks = {{
    {"UNITIoT", 1012, "SideBase", "unitiot"},
    {"UNITCore", 36888, "MainBase", "unitcore"},
    {"UNITIoTTestnet", 1007, "SideBase", "unitiottestnet"},
    {"UNITCoreTestnet", 26888, "MainBase", "unitcoretestnet"},
}};

bool one_of(std::span<const std::string_view> values, std::string_view value) {
  return std::find(values.begin(), values.end(), value) != values.end();
}

using Entry = ImportEntry;

// The reference data the document sees: what the database holds, overlaid with the file's own
// entries (which win, as the import will overwrite them).
class MergedReference {
 public:
  explicit MergedReference(const domain::ReferenceData& existing) : data_(existing) {}

  void put_network(const NetworkRow& row) {
    domain::Chain chain;
    chain.slug = row.slug;
    chain.network = row.network;
    chain.chain_id = row.chain_id;
    chain.base_chain = row.base_chain;
    chain.deposit_factory = chain::Address::parse(row.deposit_factory);
    chain.deposit_init_code_hash = chain::parse_hash32(row.deposit_init_code_hash);
    if (auto* old = const_cast<domain::Chain*>(data_.chain_by_slug(row.slug))) {
      chain.ref = old->ref;
      *old = chain;
      return;
    }
    chain.ref = next_ref();
    data_.chains.push_back(chain);
  }

  void put_asset(const AssetRow& row) {
    domain::Asset asset{row.id,        data_.chain_by_slug(row.slug)->ref,
                        row.address,   row.name,
                        row.symbol,    row.decimals,
                        row.asset_type};
    if (auto* old = const_cast<domain::Asset*>(data_.asset_by_id(row.id))) {
      *old = asset;
    } else {
      data_.assets.push_back(asset);
    }
  }

  void put_pair(const PairRow& row) {
    const auto it = std::find_if(data_.pairs.begin(), data_.pairs.end(),
                                 [&](const domain::Pair& p) { return p.id == row.id; });
    const domain::Pair pair{row.id, row.asset_a_id, row.asset_b_id, row.a2b, row.b2a};
    if (it != data_.pairs.end()) {
      *it = pair;
    } else {
      data_.pairs.push_back(pair);
    }
  }

  const domain::ReferenceData& data() const { return data_; }

  const domain::Chain* chain(std::string_view slug) const { return data_.chain_by_slug(slug); }
  const domain::Chain* chain_of(const domain::Asset& asset) const {
    return data_.chain_by_ref(asset.chain_ref);
  }
  const domain::Asset* asset(std::uint64_t id) const { return data_.asset_by_id(id); }
  const domain::Pair* pair(std::uint64_t id) const {
    const auto it = std::find_if(data_.pairs.begin(), data_.pairs.end(),
                                 [&](const domain::Pair& p) { return p.id == id; });
    return it == data_.pairs.end() ? nullptr : &*it;
  }

 private:
  std::uint16_t next_ref() const {
    std::uint16_t ref = 0;
    for (const auto& c : data_.chains) ref = std::max(ref, c.ref);
    return static_cast<std::uint16_t>(ref + 1);
  }

  domain::ReferenceData data_;
};

// The referenced network or asset of an entry, or an error naming the field.
const domain::Chain& chain_field(const Entry& e, const char* field, const MergedReference& ref,
                                 std::string* slug_out = nullptr) {
  const std::string slug = e.text(field);
  const auto* chain = ref.chain(slug);
  if (chain == nullptr) e.fail(field, "names no network of this import");
  if (slug_out != nullptr) *slug_out = slug;
  return *chain;
}

const domain::Asset& asset_field(const Entry& e, const char* field, const MergedReference& ref,
                                 std::uint64_t* id_out) {
  *id_out = e.integer(field);
  const auto* asset = ref.asset(*id_out);
  if (asset == nullptr) e.fail(field, "names no asset of this import");
  return *asset;
}

const Value* section(const rapidjson::Document& doc, const char* name) {
  const auto it = doc.FindMember(name);
  if (it == doc.MemberEnd()) return nullptr;
  if (!it->value.IsArray()) throw ImportError(std::string(name) + ": must be an array");
  return &it->value;
}

template <typename ReadOne>
void for_each_entry(const rapidjson::Document& doc, const char* name, ReadOne read_one) {
  const Value* entries = section(doc, name);
  if (entries == nullptr) return;
  for (rapidjson::SizeType i = 0; i < entries->Size(); ++i) {
    read_one(Entry((*entries)[i], std::string(name) + "[" + std::to_string(i) + "]"));
  }
}

NetworkRow read_network(const Entry& e) {
  NetworkRow row{e.text("network"),
                 e.text("slug"),
                 e.text("base_chain"),
                 e.integer("chain_id"),
                 e.address("deposit_factory", false),
                 e.tx_hash("deposit_init_code_hash", false)};
  const auto known = std::find_if(kKnownNetworks.begin(), kKnownNetworks.end(),
                                  [&](const KnownNetwork& k) { return k.network == row.network; });
  if (known == kKnownNetworks.end()) {
    e.fail("network", "must be UNITCore, UNITIoT, UNITCoreTestnet or UNITIoTTestnet");
  }
  if (row.chain_id != known->chain_id) e.fail("chain_id", "does not match the network");
  if (row.base_chain != known->base_chain) e.fail("base_chain", "does not match the network");
  if (row.slug != known->slug) e.fail("slug", "does not match the network");
  if (row.deposit_factory.empty() != row.deposit_init_code_hash.empty()) {
    e.fail("deposit_init_code_hash", "deposit_factory and deposit_init_code_hash go together");
  }
  return row;
}

AssetRow read_asset(const Entry& e, const MergedReference& ref) {
  AssetRow row;
  row.id = e.integer("id");
  chain_field(e, "slug", ref, &row.slug);
  row.asset_type = e.text("asset_type");
  if (!one_of(domain::kAssetTypes, row.asset_type)) {
    e.fail("asset_type", "must be Coin, ERC-20, NRC-6 or BRC-20");
  }
  row.address = e.address("asset", row.asset_type != "Coin");
  if (row.asset_type == "Coin" && !row.address.empty()) e.fail("asset", "must be empty for Coin");
  row.name = e.text("name");
  row.symbol = e.text("symbol");
  if (row.name.size() > 64) e.fail("name", "must be at most 64 bytes");
  if (row.symbol.size() > 32) e.fail("symbol", "must be at most 32 bytes");
  const std::uint64_t decimals = e.integer("decimals");
  if (decimals > 18) e.fail("decimals", "must be from 0 to 18");
  row.decimals = static_cast<int>(decimals);
  return row;
}

domain::DirectionSettings read_direction(const Entry& e, const std::string& dir, int decimals) {
  auto field = [&](const char* suffix) { return dir + suffix; };
  return {e.amount(field("_min_deposit_amount").c_str(), decimals),
          e.fee_percent(field("_fee_percent").c_str()),
          e.amount(field("_fee_min_amount").c_str(), decimals),
          e.amount(field("_auto_confirm_deposit_amount").c_str(), decimals),
          e.boolean(field("_disabled").c_str())};
}

PairRow read_pair(const Entry& e, const MergedReference& ref) {
  PairRow row;
  row.id = e.integer("id");
  const auto& a = asset_field(e, "asset_a_id", ref, &row.asset_a_id);
  const auto& b = asset_field(e, "asset_b_id", ref, &row.asset_b_id);
  if (a.chain_ref == b.chain_ref) e.fail("asset_b_id", "must live on another chain than A");
  row.a2b = read_direction(e, "a2b", a.decimals);
  row.b2a = read_direction(e, "b2a", b.decimals);
  const std::string connect_pair = ref.chain_of(a)->slug + "-" + ref.chain_of(b)->slug;
  if (e.has("connect_pair") && e.text("connect_pair") != connect_pair) {
    e.fail("connect_pair", "must be " + connect_pair);
  }
  return row;
}

ChainStatusRow read_chain_status(const Entry& e, const MergedReference& ref) {
  ChainStatusRow row;
  const auto& chain = chain_field(e, "slug", ref, &row.slug);
  const auto status = domain::chain_status(e.text("status"));
  if (!status) e.fail("status", "must be OK, STUCK, OFFLINE or SYNCING");
  row.status = *status;
  row.latest_height = e.integer("latest_height");
  int decimals = 18;
  for (const auto& asset : ref.data().assets) {
    if (asset.chain_ref == chain.ref && asset.asset_type == "Coin") decimals = asset.decimals;
  }
  row.supply = e.amount("supply", decimals);
  return row;
}

ConnectRow read_connect(const Entry& e, const Value& value, const MergedReference& ref) {
  auto slug = [&](const char* side) -> std::string {
    if (!value.HasMember(side) || !value[side].IsObject()) e.fail(side, "must be a Blockchain");
    std::string slug;
    chain_field(Entry(value[side], e.where() + "." + side), "slug", ref, &slug);
    return slug;
  };
  return {slug("bc1"), slug("bc2")};
}

domain::HistoryStatus canonical_status(const Entry& e) {
  if (const auto status = domain::history_status(e.text("status"))) return *status;
  e.fail("status", "must be Deposit, Pending, Confirmed or Error");
}

// The record's deposit address must be the one its source chain derives for its recipient.
void check_deposit_address(const Entry& e, const HistoryRow& r, const domain::Chain& source_chain,
                           const domain::Chain& destination_chain) {
  if (!source_chain.deposit_factory || !source_chain.deposit_init_code_hash) {
    e.fail("source_slug", "has no deposit_factory, so it takes no deposits");
  }
  const auto derived = chain::deposit_address(
      *source_chain.deposit_factory, *source_chain.deposit_init_code_hash,
      destination_chain.chain_id, *chain::Address::parse(r.destination_address));
  if (derived.checksummed() != r.source_deposit_address) {
    e.fail("source_deposit_address",
           "is not the deposit address of destination_address (" + derived.checksummed() + ")");
  }
}

// A hash the document gives (in any case) must be the one the hash rule makes.
void check_hash(const Entry& e, const std::string& expected) {
  if (!e.has("hash")) return;
  if (chain::ascii_lower(e.text("hash")) != expected) {
    e.fail("hash", "does not follow the hash rule (expected " + expected + ")");
  }
}

HistoryRow read_history(const Entry& e, const MergedReference& ref) {
  HistoryRow r;
  r.id = e.integer("id");
  r.pair_id = e.integer("pair_id");
  const auto& source_chain = chain_field(e, "source_slug", ref, &r.source_slug);
  const auto& destination_chain = chain_field(e, "destination_slug", ref, &r.destination_slug);
  const auto& source_asset = asset_field(e, "source_asset_id", ref, &r.source_asset_id);
  const auto& destination_asset =
      asset_field(e, "destination_asset_id", ref, &r.destination_asset_id);
  if (source_asset.chain_ref != source_chain.ref) {
    e.fail("source_asset_id", "is not an asset of source_slug");
  }
  if (destination_asset.chain_ref != destination_chain.ref) {
    e.fail("destination_asset_id", "is not an asset of destination_slug");
  }
  const auto* pair = ref.pair(r.pair_id);
  if (pair == nullptr) e.fail("pair_id", "names no pair of this import");
  const bool a2b =
      pair->asset_a_id == r.source_asset_id && pair->asset_b_id == r.destination_asset_id;
  const bool b2a =
      pair->asset_b_id == r.source_asset_id && pair->asset_a_id == r.destination_asset_id;
  if (!a2b && !b2a) e.fail("pair_id", "does not join source_asset_id and destination_asset_id");

  r.source_sender = e.address("source_sender");
  r.destination_address = e.address("destination_address");
  r.source_deposit_address = e.address("source_deposit_address");
  check_deposit_address(e, r, source_chain, destination_chain);

  r.source_block_number = std::to_string(e.integer("source_block_number"));
  r.destination_block_number = e.optional_integer_text("destination_block_number");
  r.source_block_timestamp = std::to_string(e.integer("source_block_timestamp"));
  r.destination_block_timestamp = e.optional_integer_text("destination_block_timestamp");
  r.source_tx_hash = e.tx_hash("source_tx_hash");
  r.destination_tx_hash = e.tx_hash("destination_tx_hash", false);
  r.source_tx_index = e.integer("source_tx_index");
  if (r.source_tx_index > 0xFFFFFFFFu) e.fail("source_tx_index", "is too large");

  r.source_amount = e.amount("source_amount", source_asset.decimals);
  r.destination_amount = e.amount("destination_amount", destination_asset.decimals, false);
  r.fee = e.amount("fee", source_asset.decimals, false);
  r.status = canonical_status(e);
  r.status_message = e.text("status_message", false);
  if (r.status_message.size() > 255) e.fail("status_message", "must be at most 255 bytes");

  r.hash = domain::history_hash(source_chain.network, source_chain.chain_id, r.source_tx_hash,
                                r.source_tx_index);
  check_hash(e, r.hash);
  return r;
}

void add_connect(std::vector<ConnectRow>& connects, ConnectRow row) {
  const bool known = std::any_of(connects.begin(), connects.end(), [&](const ConnectRow& c) {
    return (c.slug_a == row.slug_a && c.slug_b == row.slug_b) ||
           (c.slug_a == row.slug_b && c.slug_b == row.slug_a);
  });
  if (!known) connects.push_back(std::move(row));
}

}  // namespace

ImportBatch read_import_document(std::string_view text, const domain::ReferenceData& existing) {
  rapidjson::Document doc;
  // Iterative: the recursive parser overflows the stack on deeply nested arrays ("[[[[...").
  doc.Parse<rapidjson::kParseValidateEncodingFlag | rapidjson::kParseIterativeFlag>(text.data(),
                                                                                    text.size());
  if (doc.HasParseError()) {
    throw ImportError("not valid JSON at byte " + std::to_string(doc.GetErrorOffset()) + ": " +
                      rapidjson::GetParseError_En(doc.GetParseError()));
  }
  if (!doc.IsObject()) throw ImportError("the document must be a JSON object");

  ImportBatch batch;
  MergedReference ref(existing);
  // Sections are read in dependency order, each entry seeing those before it.
  for_each_entry(doc, "networks", [&](const Entry& e) {
    batch.networks.push_back(read_network(e));
    ref.put_network(batch.networks.back());
  });
  for_each_entry(doc, "assets", [&](const Entry& e) {
    batch.assets.push_back(read_asset(e, ref));
    ref.put_asset(batch.assets.back());
  });
  if (const Value* connects = section(doc, "connects")) {
    for (rapidjson::SizeType i = 0; i < connects->Size(); ++i) {
      const Entry e((*connects)[i], "connects[" + std::to_string(i) + "]");
      add_connect(batch.connects, read_connect(e, (*connects)[i], ref));
    }
  }
  for_each_entry(doc, "pairs", [&](const Entry& e) {
    batch.pairs.push_back(read_pair(e, ref));
    ref.put_pair(batch.pairs.back());
    const auto& p = batch.pairs.back();
    add_connect(batch.connects, {ref.chain_of(*ref.asset(p.asset_a_id))->slug,
                                 ref.chain_of(*ref.asset(p.asset_b_id))->slug});
  });
  for_each_entry(doc, "chains",
                 [&](const Entry& e) { batch.chains.push_back(read_chain_status(e, ref)); });
  std::map<std::uint64_t, std::string> seen_ids;
  std::map<std::string, std::string> seen_hashes, seen_deposits;
  for_each_entry(doc, "history", [&](const Entry& e) {
    batch.history.push_back(read_history(e, ref));
    const auto& r = batch.history.back();
    if (const auto [it, fresh] = seen_ids.emplace(r.id, e.where()); !fresh) {
      e.fail("id", "repeats " + it->second);
    }
    if (const auto [it, fresh] = seen_hashes.emplace(r.hash, e.where()); !fresh) {
      e.fail("source_tx_index", "gives the same hash as " + it->second);
    }
    if (seen_deposits.emplace(r.source_slug + r.source_deposit_address, e.where()).second) {
      batch.deposit_accounts.push_back(
          {r.source_slug, r.source_deposit_address, r.destination_slug, r.destination_address});
    }
  });
  return batch;
}

}  // namespace connector::admin
