#pragma once
// SHA-256 through OpenSSL: the history hash rule and ETags.
#include <string_view>

#include "chain/bytes.h"

namespace connector::chain {

Hash32 sha256(std::string_view data);

}  // namespace connector::chain
