#include "chain/keccak.h"

#include <nettle/sha3.h>

#include <cstring>

namespace connector::chain {
namespace {

// Keccak-256: capacity 512 bits, so the rate is 200 - 64 = 136 bytes.
constexpr std::size_t kRate = 136;
static_assert(kRate == SHA3_256_BLOCK_SIZE);

// XORs one rate-sized block into the state. Lanes are little-endian 64-bit words, so bytes
// are placed by shifting rather than by memcpy, which keeps this correct on any host order.
void absorb_block(sha3_state& state, const std::uint8_t* block) {
  for (std::size_t i = 0; i < kRate; ++i) {
    state.a[i / 8] ^= static_cast<std::uint64_t>(block[i]) << (8 * (i % 8));
  }
}

}  // namespace

Hash32 keccak256(std::span<const std::uint8_t> data) {
  sha3_state state;
  std::memset(&state, 0, sizeof state);

  std::size_t offset = 0;
  for (; data.size() - offset >= kRate; offset += kRate) {
    absorb_block(state, data.data() + offset);
    sha3_permute(&state);
  }

  // Original Keccak pad10*1 with domain byte 0x01 (FIPS SHA3 would use 0x06). When only one
  // byte of padding fits, 0x01 and 0x80 share it as 0x81.
  std::uint8_t last[kRate] = {};
  const std::size_t rest = data.size() - offset;
  if (rest > 0) std::memcpy(last, data.data() + offset, rest);
  last[rest] ^= 0x01;
  last[kRate - 1] ^= 0x80;
  absorb_block(state, last);
  sha3_permute(&state);

  Hash32 out{};
  for (std::size_t i = 0; i < out.size(); ++i) {
    out[i] = static_cast<std::uint8_t>(state.a[i / 8] >> (8 * (i % 8)));
  }
  return out;
}

Hash32 keccak256(std::string_view data) {
  return keccak256(std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>(data.data()),
                                                 data.size()));
}

}  // namespace connector::chain
