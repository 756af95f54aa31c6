// Fuzzes the import file reader, read_import_document, against an empty database. Bad input
// must end in an ImportError (any other exception is a crash); an accepted document must give
// rows in the database's canonical forms: EIP-55 addresses, lower-case hashes, canonical base
// units.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "admin/import_document.h"
#include "chain/address.h"
#include "chain/amount.h"
#include "fuzz_check.h"

namespace {

namespace admin = connector::admin;
namespace chain = connector::chain;

bool is_lower_hex(std::string_view text) {
  return std::all_of(text.begin(), text.end(),
                     [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

bool is_address(std::string_view text, bool optional) {
  return (optional && text.empty()) || chain::is_checksummed(text);
}

bool is_tx_hash(std::string_view text, bool optional) {
  if (optional && text.empty()) return true;
  return text.size() == 66 && text.starts_with("0x") && is_lower_hex(text.substr(2));
}

bool is_base_units(const std::string& text, bool optional) {
  return (optional && text.empty()) || chain::canonical_base_units(text) == text;
}

bool is_direction(const connector::domain::DirectionSettings& d) {
  return is_base_units(d.min_deposit_amount, false) && is_base_units(d.fee_min_amount, false) &&
         is_base_units(d.auto_confirm_deposit_amount, false) &&
         d.fee_percent_millionths <= 10'000'000'000;
}

void check_batch(const admin::ImportBatch& batch) {
  for (const auto& n : batch.networks) {
    FUZZ_CHECK(is_address(n.deposit_factory, true));
    FUZZ_CHECK(is_tx_hash(n.deposit_init_code_hash, true));
    FUZZ_CHECK(n.deposit_factory.empty() == n.deposit_init_code_hash.empty());
  }
  for (const auto& a : batch.assets) {
    FUZZ_CHECK(is_address(a.address, a.asset_type == "Coin"));
    FUZZ_CHECK(a.decimals >= 0 && a.decimals <= 18);
  }
  for (const auto& p : batch.pairs) FUZZ_CHECK(is_direction(p.a2b) && is_direction(p.b2a));
  for (const auto& c : batch.chains) FUZZ_CHECK(is_base_units(c.supply, false));
  for (const auto& h : batch.history) {
    FUZZ_CHECK(h.hash.size() == 64 && is_lower_hex(h.hash));
    FUZZ_CHECK(is_address(h.source_deposit_address, false) && is_address(h.source_sender, false) &&
               is_address(h.destination_address, false));
    FUZZ_CHECK(is_tx_hash(h.source_tx_hash, false) && is_tx_hash(h.destination_tx_hash, true));
    FUZZ_CHECK(is_base_units(h.source_amount, false) && is_base_units(h.destination_amount, true) &&
               is_base_units(h.fee, true));
    FUZZ_CHECK(h.source_tx_index <= 0xFFFFFFFFu && h.status_message.size() <= 255);
  }
  FUZZ_CHECK(batch.deposit_accounts.size() <= batch.history.size());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    check_batch(admin::read_import_document(text, {}));
  } catch (const admin::ImportError&) {
    // A refused document: the normal outcome for most inputs.
  }
  return 0;
}
