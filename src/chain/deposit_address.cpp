#include "chain/deposit_address.h"

#include <algorithm>

#include "chain/keccak.h"

namespace connector::chain {

Address create2_address(const Address& factory, const Hash32& salt, const Hash32& init_code_hash) {
  // 1 + 20 + 32 + 32 = 85 bytes, per EIP-1014.
  std::array<std::uint8_t, 85> preimage{};
  auto it = preimage.begin();
  *it++ = 0xff;
  it = std::copy(factory.bytes().begin(), factory.bytes().end(), it);
  it = std::copy(salt.begin(), salt.end(), it);
  std::copy(init_code_hash.begin(), init_code_hash.end(), it);

  const Hash32 hash = keccak256(preimage);
  Address::Bytes20 out{};
  std::copy(hash.begin() + 12, hash.end(), out.begin());
  return Address(out);
}

Hash32 deposit_salt(std::uint64_t recipient_chain_id, const Address& recipient) {
  // Two ABI-style uint256 words: the chain id big-endian in the low 8 bytes of the first, the
  // address right-aligned in the second; everything else zero.
  std::array<std::uint8_t, 64> words{};
  for (int i = 0; i < 8; ++i) {
    words[31 - i] = static_cast<std::uint8_t>(recipient_chain_id >> (8 * i));
  }
  std::copy(recipient.bytes().begin(), recipient.bytes().end(), words.begin() + 44);
  return keccak256(words);
}

Address deposit_address(const Address& factory, const Hash32& init_code_hash,
                        std::uint64_t recipient_chain_id, const Address& recipient) {
  return create2_address(factory, deposit_salt(recipient_chain_id, recipient), init_code_hash);
}

}  // namespace connector::chain
