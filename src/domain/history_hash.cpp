#include "domain/history_hash.h"

#include "chain/bytes.h"
#include "chain/sha256.h"

namespace connector::domain {

std::string history_hash(std::string_view network, std::uint64_t chain_id,
                         std::string_view source_tx_hash, std::uint64_t tx_index) {
  const std::string text = std::string(network) + ":" + std::to_string(chain_id) + ":" +
                           std::string(source_tx_hash) + ":" + std::to_string(tx_index);
  return chain::to_hex(chain::sha256(text));
}

}  // namespace connector::domain
