#pragma once
// The hash rule of a history record, the one place it is written: the importer checks a
// document's hashes against it and the generator (sample data, gen-history) makes them with it.
#include <cstdint>
#include <string>
#include <string_view>

namespace connector::domain {

// SHA-256 of "network:chainId:txHash:txIndex" (the source chain's network name and chain id,
// the source transaction's hash as given, its index in decimal), as 64 lower-case hex digits.
std::string history_hash(std::string_view network, std::uint64_t chain_id,
                         std::string_view source_tx_hash, std::uint64_t tx_index);

}  // namespace connector::domain
