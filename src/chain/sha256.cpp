#include "chain/sha256.h"

#include <openssl/sha.h>

namespace connector::chain {

Hash32 sha256(std::string_view data) {
  Hash32 out{};
  // One-shot SHA256() cannot fail for in-memory input and needs no context management.
  SHA256(reinterpret_cast<const unsigned char*>(data.data()), data.size(), out.data());
  return out;
}

}  // namespace connector::chain
