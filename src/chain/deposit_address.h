#pragma once
// The deposit address of a recipient: a CREATE2 (EIP-1014) counterfactual forwarder on the
// deposit chain. Derived, never stored as a secret: the same inputs give the same address on
// every worker and node.
#include <cstdint>

#include "chain/address.h"
#include "chain/bytes.h"

namespace connector::chain {

// keccak256(0xff ++ factory ++ salt ++ init_code_hash)[12:]
Address create2_address(const Address& factory, const Hash32& salt, const Hash32& init_code_hash);

// keccak256(uint256(recipient_chain_id) ++ uint256(recipient)), both 32-byte big-endian words.
Hash32 deposit_salt(std::uint64_t recipient_chain_id, const Address& recipient);

// create2_address(factory, deposit_salt(recipient_chain_id, recipient), init_code_hash)
Address deposit_address(const Address& factory, const Hash32& init_code_hash,
                        std::uint64_t recipient_chain_id, const Address& recipient);

}  // namespace connector::chain
