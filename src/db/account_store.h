#pragma once
// Records recipient -> deposit address mappings for the chain watchers: the service's only write.
#include <cstdint>
#include <string>

#include "db/database.h"
#include "db/new_row_budget.h"

namespace connector::db {

struct DepositAccount {
  std::uint16_t deposit_chain = 0;    // chains.id
  std::string deposit_address;        // EIP-55
  std::uint16_t recipient_chain = 0;  // chains.id
  std::string recipient_address;      // EIP-55
};

// Records the mapping on the primary (db: the write connection) and proves it recorded: the
// row that holds the deposit address afterwards names this very recipient. Insert-if-absent on
// the unique (deposit chain, deposit address) key, so repeating it is harmless; a plain INSERT,
// not INSERT IGNORE, so no error is turned into a warning. Throws DatabaseUnavailable when the
// address is bound to another recipient, and DatabaseError/DatabaseUnavailable when the write
// fails: the caller answers 503 and shows no address. A row that is not there yet takes one of
// budget's; past the cap NewRowCapReached is thrown and nothing is written.
//
// A mapping already recorded is proven from `reader` first (a replica, or the primary): a row
// a replica holds came from the primary, so it is recorded there, and a recorded recipient is
// answered while the primary is away. Only a mapping the reader does not show goes to `writer`.
void record_deposit_account(Database& reader, Database& writer, NewRowBudget& budget,
                            const DepositAccount& account);

}  // namespace connector::db
