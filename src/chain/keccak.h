#pragma once
// Keccak-256 with Ethereum's original padding (0x01), not FIPS SHA3-256 (0x06).
// OpenSSL 3.0 has no Keccak-256 digest, so the sponge is built on nettle's public
// Keccak-f[1600] permutation (sha3_permute).
#include <span>
#include <string_view>

#include "chain/bytes.h"

namespace connector::chain {

Hash32 keccak256(std::span<const std::uint8_t> data);
Hash32 keccak256(std::string_view data);

}  // namespace connector::chain
