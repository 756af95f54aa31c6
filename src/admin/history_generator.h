#pragma once
// Coherent, realistic history records for a deployment's reference data: the demo's sample,
// the tests' fixtures and the benchmark's millions of rows all come from here. Each record's
// deposit address is the one /v1/account derives, its hash follows the hash rule, its fee and
// payout follow its pair's settings, and its status says which payout fields are recorded.
// Skewed like real traffic: a few busy recipients, many light ones; every pair, both directions
// (unless disabled), every status.
#include <cstdint>
#include <random>
#include <vector>

#include "admin/import_document.h"
#include "domain/reference_data.h"

namespace connector::admin {

class HistoryGenerator {
 public:
  // recipients: how many distinct recipient addresses to draw from (at least 4).
  HistoryGenerator(const domain::ReferenceData& data, std::uint64_t seed, std::size_t recipients);

  HistoryRow next(std::uint64_t id);

 private:
  struct Direction {
    const domain::Pair* pair;
    const domain::Asset* source;
    const domain::Asset* destination;
    const domain::DirectionSettings* settings;
    const domain::Chain* source_chain;
    const domain::Chain* destination_chain;
  };

  const Direction& pick_direction();
  domain::HistoryStatus pick_status();
  chain::Address random_address();
  std::string random_tx_hash();

  std::mt19937_64 random_;
  std::vector<Direction> directions_;  // weighted: earlier pairs are busier
  std::vector<std::size_t> weights_;
  std::size_t total_weight_ = 0;
  std::vector<chain::Address> recipients_;
};

}  // namespace connector::admin
