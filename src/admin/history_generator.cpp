#include "admin/history_generator.h"

#include <stdexcept>

#include "chain/amount.h"
#include "chain/deposit_address.h"
#include "domain/history_hash.h"

namespace connector::admin {
namespace {

// Generated amounts stay far below 2^128, so 128-bit arithmetic is exact for them.
__extension__ typedef unsigned __int128 Uint128;

Uint128 parse_u128(const std::string& digits) {
  Uint128 value = 0;
  for (char c : digits) value = value * 10 + static_cast<unsigned>(c - '0');
  return value;
}

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

// Rescales base units between assets of different decimals (rounding down).
Uint128 rescale(Uint128 value, int from_decimals, int to_decimals) {
  if (to_decimals >= from_decimals) return value * pow10(to_decimals - from_decimals);
  return value / pow10(from_decimals - to_decimals);
}

}  // namespace

HistoryGenerator::HistoryGenerator(const domain::ReferenceData& data, std::uint64_t seed,
                                   std::size_t recipients)
    : random_(seed) {
  std::size_t weight = std::size_t{1} << std::min<std::size_t>(data.pairs.size(), 16);
  for (const auto& pair : data.pairs) {
    const auto* a = data.asset_by_id(pair.asset_a_id);
    const auto* b = data.asset_by_id(pair.asset_b_id);
    if (a == nullptr || b == nullptr) throw std::runtime_error("a pair names a missing asset");
    const auto* chain_a = data.chain_by_ref(a->chain_ref);
    const auto* chain_b = data.chain_by_ref(b->chain_ref);
    weight = std::max<std::size_t>(1, weight / 2);  // each pair half as busy as the one before
    if (!pair.a2b.disabled && chain_a->deposit_factory) {
      directions_.push_back({&pair, a, b, &pair.a2b, chain_a, chain_b});
      weights_.push_back(weight);
    }
    if (!pair.b2a.disabled && chain_b->deposit_factory) {
      directions_.push_back({&pair, b, a, &pair.b2a, chain_b, chain_a});
      weights_.push_back(weight);
    }
  }
  if (directions_.empty()) throw std::runtime_error("no enabled pair direction takes deposits");
  for (auto w : weights_) total_weight_ += w;
  for (std::size_t i = 0; i < std::max<std::size_t>(recipients, 4); ++i) {
    recipients_.push_back(random_address());
  }
}

const HistoryGenerator::Direction& HistoryGenerator::pick_direction() {
  std::size_t draw = random_() % total_weight_;
  for (std::size_t i = 0; i < directions_.size(); ++i) {
    if (draw < weights_[i]) return directions_[i];
    draw -= weights_[i];
  }
  return directions_.back();
}

domain::HistoryStatus HistoryGenerator::pick_status() {
  const auto draw = random_() % 10;
  if (draw < 7) return domain::HistoryStatus::kConfirmed;
  if (draw < 8) return domain::HistoryStatus::kPending;
  if (draw < 9) return domain::HistoryStatus::kDeposit;
  return domain::HistoryStatus::kError;
}

chain::Address HistoryGenerator::random_address() {
  chain::Address::Bytes20 bytes{};
  for (auto& b : bytes) b = static_cast<std::uint8_t>(random_());
  return chain::Address(bytes);
}

std::string HistoryGenerator::random_tx_hash() {
  chain::Hash32 bytes{};
  for (auto& b : bytes) b = static_cast<std::uint8_t>(random_());
  return "0x" + chain::to_hex(bytes);
}

HistoryRow HistoryGenerator::next(std::uint64_t id) {
  const Direction& d = pick_direction();
  // A quarter of the traffic goes to three busy recipients, the rest spreads over the others.
  const auto& recipient =
      recipients_[random_() % 4 == 0 ? random_() % 3 : random_() % recipients_.size()];
  const auto deposit = chain::deposit_address(*d.source_chain->deposit_factory,
                                              *d.source_chain->deposit_init_code_hash,
                                              d.destination_chain->chain_id, recipient);

  const Uint128 unit = pow10(d.source->decimals);
  // One draw per statement: the order of two calls in one expression is unspecified, and the
  // sanitized build once drew them the other way round (other demo data than docs/tour.md's).
  const auto whole = random_() % 5000;
  const auto fraction = random_() % unit;
  const Uint128 amount = parse_u128(d.settings->min_deposit_amount) + unit * whole + fraction;
  Uint128 fee = amount * d.settings->fee_percent_millionths / (Uint128{10000} * 1000000);
  fee = std::max(fee, parse_u128(d.settings->fee_min_amount));
  fee = std::min(fee, amount);

  HistoryRow r;
  r.id = id;
  r.pair_id = d.pair->id;
  r.source_slug = d.source_chain->slug;
  r.destination_slug = d.destination_chain->slug;
  r.source_deposit_address = deposit.checksummed();
  r.source_sender = random_address().checksummed();
  r.destination_address = recipient.checksummed();
  r.status = pick_status();
  const bool paid = r.status == domain::HistoryStatus::kConfirmed;
  const bool priced =
      r.status != domain::HistoryStatus::kDeposit;  // the fee and payout are known once confirmed
  const std::uint64_t source_block = 1'200'000 + id * 9 + random_() % 9;
  const std::uint64_t timestamp = 1'700'000'000 + id * 61;
  r.source_block_number = std::to_string(source_block);
  r.destination_block_number = paid ? std::to_string(source_block / 2 + 3) : "";
  r.source_block_timestamp = std::to_string(timestamp);
  r.destination_block_timestamp = paid ? std::to_string(timestamp + 61) : "";
  r.source_tx_hash = random_tx_hash();
  r.source_tx_index = random_() % 200;
  r.destination_tx_hash = paid ? random_tx_hash() : "";
  r.source_asset_id = d.source->id;
  r.destination_asset_id = d.destination->id;
  r.source_amount = to_decimal(amount);
  if (priced) {
    r.fee = to_decimal(fee);
    r.destination_amount =
        to_decimal(rescale(amount - fee, d.source->decimals, d.destination->decimals));
  }
  if (r.status == domain::HistoryStatus::kError)
    r.status_message = "Payout reverted on the destination chain.";
  r.hash = domain::history_hash(d.source_chain->network, d.source_chain->chain_id, r.source_tx_hash,
                                r.source_tx_index);
  return r;
}

}  // namespace connector::admin
