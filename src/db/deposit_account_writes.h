#pragma once
// Records recipient -> deposit address mappings for the chain watchers: the service's only write.
#include <cstdint>
#include <string>
#include <vector>

#include "db/connection.h"
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
// The primary (`writer`) is asked first, always. Only when it cannot answer at all (its first
// read fails: DatabaseUnavailable) does `reader` (a replica) prove the mapping instead; once it
// has answered, its answer stands (an insert that then fails is a 503). The fallback: a row a
// replica holds came from the primary through replication, so a recipient recorded earlier is
// answered while the primary is away, and a new one gets the 503. (A primary that crashed with
// sync_binlog = 0 may have lost a row it had already replicated; the next request after it is
// back records it again, insert-if-absent.)
void record_deposit_account(Connection& reader, Connection& writer, NewRowBudget& budget,
                            const DepositAccount& account);
// The statements it runs: the binding's read and the insert (db/statement_set.h).
std::vector<std::string> deposit_account_statements();

}  // namespace connector::db
