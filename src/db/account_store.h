#pragma once
// Records recipient -> deposit address mappings for the chain watchers: the service's only write.
#include <cstdint>
#include <string>

#include "db/database.h"

namespace connector::db {

struct DepositAccount {
  std::uint16_t deposit_chain = 0;    // chains.id
  std::string deposit_address;        // EIP-55
  std::uint16_t recipient_chain = 0;  // chains.id
  std::string recipient_address;      // EIP-55
};

// Insert-if-absent on the unique (deposit chain, deposit address) key: repeating it is harmless.
// INSERT IGNORE rather than ON DUPLICATE KEY UPDATE, so the writer account needs INSERT on this
// one table and nothing else; the values are validated, so IGNORE hides only the duplicate.
// Throws DatabaseUnavailable when it cannot be recorded.
void record_deposit_account(Database& db, const DepositAccount& account);

// True when the mapping is already recorded (read through the read servers: a replica that lags
// only costs one more idempotent insert on the primary).
bool deposit_account_recorded(Database& db, const DepositAccount& account);

}  // namespace connector::db
