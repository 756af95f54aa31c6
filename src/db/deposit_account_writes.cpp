#include "db/deposit_account_writes.h"

#include <atomic>
#include <chrono>

#include "chain/address.h"
#include "metrics/scoreboard.h"
#include "util/log.h"
#include "util/log_throttle.h"

namespace connector::db {
namespace {

constexpr int kDuplicateKey = 1062;  // ER_DUP_ENTRY

const std::string& binding_statement() {
  static const std::string sql =
      "SELECT recipient_chain, recipient_address FROM deposit_accounts "
      "WHERE deposit_chain = ? AND deposit_address = ?";
  return sql;
}

const std::string& insert_statement() {
  static const std::string sql =
      "INSERT INTO deposit_accounts "
      "(deposit_chain, deposit_address, recipient_chain, recipient_address) "
      "VALUES (?, ?, ?, ?)";
  return sql;
}

enum class Binding { kAbsent, kThisRecipient, kAnotherRecipient };

Binding binding(Connection& db, const DepositAccount& account) {
  auto rs = db.query(binding_statement(),
                     {std::uint64_t{account.deposit_chain}, account.deposit_address});
  if (!rs->next()) return Binding::kAbsent;
  // Addresses compare in any case, as the column's collation does (a node may write them
  // in lower case).
  const bool same = read_value<std::uint16_t>(*rs, 1) == account.recipient_chain &&
                    chain::Address::parse(read_value<std::string>(*rs, 2)) ==
                        chain::Address::parse(account.recipient_address);
  return same ? Binding::kThisRecipient : Binding::kAnotherRecipient;
}

bool insert(Connection& db, const DepositAccount& account) {
  try {
    return db.execute(insert_statement(),
                      {std::uint64_t{account.deposit_chain}, account.deposit_address,
                       std::uint64_t{account.recipient_chain}, account.recipient_address}) == 1;
  } catch (const sql::SQLException& e) {
    if (e.getErrorCode() != kDuplicateKey) throw;
    return false;  // another request recorded it a moment ago: looked at again by the caller
  }
}

// True when the reader shows this very mapping; false when it does not, or cannot tell now
// (the writer, the authority, decides then).
bool shown_recorded(Connection& reader, const DepositAccount& account) {
  try {
    return reader.run([&](Connection& session) { return binding(session, account); }) ==
           Binding::kThisRecipient;
  } catch (const DatabaseUnavailable&) {
    return false;
  } catch (const DatabaseError&) {
    return false;
  }
}

// The mapping recorded on the primary, proven there (the authority); `result`: what the
// primary holds for the deposit address now.
void record_on_primary(Connection& db, NewRowBudget& budget, const DepositAccount& account,
                       Binding result) {
  if (result == Binding::kAbsent) {
    // Taken once per request that needs a row, outside the work run() may repeat after a lost
    // connection. A write that then fails has still spent it.
    budget.take();
    result = db.run([&](Connection& session) {
      if (insert(session, account)) {
        metrics::increment(&metrics::Scoreboard::deposit_accounts_created);
        return Binding::kThisRecipient;
      }
      return binding(session, account);  // a concurrent request (or a lost try) inserted it
    });
  }
  if (result == Binding::kAbsent) {
    throw DatabaseUnavailable("the deposit address could not be shown recorded");
  }
  if (result == Binding::kAnotherRecipient) {
    util::log_error("deposit address " + account.deposit_address + " on chain " +
                    std::to_string(account.deposit_chain) +
                    " is recorded for another recipient than " + account.recipient_address);
    throw DatabaseUnavailable("the deposit address is recorded for another recipient");
  }
}

}  // namespace

void record_deposit_account(Connection& reader, Connection& writer, NewRowBudget& budget,
                            const DepositAccount& account) {
  Binding on_primary{};
  try {
    on_primary = writer.run([&](Connection& session) { return binding(session, account); });
  } catch (const DatabaseUnavailable& e) {
    // The primary cannot be asked at all now. A mapping the reader shows came from the primary
    // through replication, so a recipient recorded earlier is answered while the primary is
    // away; a new one is not (503). Once the primary has answered, its answer stands: nothing
    // below falls back.
    if (!shown_recorded(reader, account)) throw;
    static util::LogThrottle replica_lines(std::chrono::seconds(60));
    if (replica_lines.due()) {
      util::log_warning(std::string("recorded deposit addresses shown from a replica (") +
                        e.what() + "); lines like this at most once a minute");
    }
    return;
  }
  record_on_primary(writer, budget, account, on_primary);
}

std::vector<std::string> deposit_account_statements() {
  return {binding_statement(), insert_statement()};
}

}  // namespace connector::db
