#include "db/account_store.h"

#include <cppconn/prepared_statement.h>

namespace connector::db {

void record_deposit_account(Database& db, const DepositAccount& account) {
  db.run([&](Database& session) {
    auto& stmt = session.prepare(
        "INSERT IGNORE INTO deposit_accounts "
        "(deposit_chain, deposit_address, recipient_chain, recipient_address) "
        "VALUES (?, ?, ?, ?)");
    stmt.setUInt(1, account.deposit_chain);
    stmt.setString(2, account.deposit_address);
    stmt.setUInt(3, account.recipient_chain);
    stmt.setString(4, account.recipient_address);
    stmt.executeUpdate();
  });
}

}  // namespace connector::db
