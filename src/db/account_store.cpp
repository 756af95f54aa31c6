#include "db/account_store.h"

#include <cppconn/prepared_statement.h>
#include <cppconn/resultset.h>

#include <memory>

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

bool deposit_account_recorded(Database& db, const DepositAccount& account) {
  return db.run([&](Database& session) {
    auto& stmt = session.prepare(
        "SELECT recipient_chain, recipient_address FROM deposit_accounts "
        "WHERE deposit_chain = ? AND deposit_address = ?");
    stmt.setUInt(1, account.deposit_chain);
    stmt.setString(2, account.deposit_address);
    std::unique_ptr<sql::ResultSet> rs(stmt.executeQuery());
    return rs->next() && rs->getUInt(1) == account.recipient_chain &&
           std::string(rs->getString(2)) == account.recipient_address;
  });
}

}  // namespace connector::db
