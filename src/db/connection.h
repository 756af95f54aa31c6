#pragma once
// One MariaDB connection with its prepared statements, owned by one thread, over an ordered list
// of servers (read replicas, then the primary: db/targets.h). It reconnects by itself: a query
// that fails because its server went away (restart, killed connection, failover) is retried once
// on a fresh connection to the first server that answers; if none can, the caller gets
// DatabaseUnavailable (a 503), and the next request tries again.
//
// One deadline per request: set_deadline() bounds all the database work of a request (connect,
// every statement, the retry). Each statement runs with the server's max_statement_time cut to
// what is left, connects wait at most what is left, nothing is retried past it, and the client's
// read timeout (the budget in whole seconds, rounded down) stops a wait on a hung server. A
// statement the server stops or refuses for its own state (time budget, lock wait, a full
// statement cache) is DatabaseUnavailable at once, without a retry, and that statement is
// dropped; the connection is kept.
//
// Its policy lives in parts without a server, each unit-tested: which server to use
// (db/server_selector.h), the deadline as session timeouts (db/session_timeouts.h), the
// prepared statements' LRU (db/statement_cache.h) and what each MariaDB error means
// (db/mariadb_errors.h). This class runs statements and applies their decisions.
#include <cppconn/exception.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "db/server_selector.h"
#include "db/statement.h"
#include "db/statement_cache.h"
#include "db/targets.h"

namespace sql {
class Connection;
class PreparedStatement;
}  // namespace sql

namespace connector::db {

// The database cannot answer now (down, restarting, timed out): retry later.
class DatabaseUnavailable : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Any other database failure (a bug or a schema mismatch): a 500.
class DatabaseError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Call once in main before any thread touches the database (the driver's setup is not
// thread-safe); each thread that uses a Connection then holds a DriverThreadScope.
void init_driver();
class DriverThreadScope {
 public:
  DriverThreadScope();
  ~DriverThreadScope();
  DriverThreadScope(const DriverThreadScope&) = delete;
  DriverThreadScope& operator=(const DriverThreadScope&) = delete;
};

class Connection {
 public:
  using Clock = std::chrono::steady_clock;

  // At most this many prepared statements per connection: the least recently used one is
  // closed to make room. The worker's reads and writes use a fixed set smaller than this
  // (db/statement_set.h: the history statements, their number derived from the filters, and
  // a few others; test_history_statements holds them within it), so the bound only guards
  // against a statement text that would ever be built from input.
  static constexpr std::size_t kMaxStatements = 192;

  // A probe connection (the prober's) ignores open breakers, and its answers close them.
  Connection(std::vector<DatabaseTarget> targets, ConnectionOptions options, bool probe = false);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Runs work(*this) on a live connection, retrying once on a new connection when the old one
  // was lost and the deadline allows. work must be safe to repeat (reads, or idempotent writes).
  template <typename Work>
  auto run(Work&& work) -> decltype(work(*this)) {
    for (int attempt = 0;; ++attempt) {
      try {
        ensure_connected();
        if constexpr (std::is_void_v<decltype(work(*this))>) {
          work(*this);
          selector_.answered();
          return;
        } else {
          auto result = work(*this);
          selector_.answered();
          return result;
        }
      } catch (const sql::SQLException& e) {
        handle_failure(e, attempt);  // throws when it should not be retried
      }
    }
  }

  // Inside run(): a statement's result rows, its parameters bound in placeholder order.
  std::unique_ptr<sql::ResultSet> query(const std::string& sql_text, const Params& params = {});
  // Inside run(): every row of a statement, read through the row type's column table.
  template <typename Row>
  std::vector<Row> rows(const std::string& sql_text, const Params& params,
                        std::span<const Column<Row>> columns) {
    auto rs = query(sql_text, params);
    std::vector<Row> out;
    while (rs->next()) out.push_back(read_row(*rs, columns));
    return out;
  }
  // Inside run(): a write; the number of rows it changed.
  std::uint64_t execute(const std::string& sql_text, const Params& params = {});

  // The request's deadline for all its database work (Clock::time_point::max(): none).
  void set_deadline(Clock::time_point deadline) { deadline_ = deadline; }

  // Explicit transactions: a history page's count and rows read in one snapshot
  // (db/history_reads.cpp), and the admin tool's all-or-nothing import and bulk writes.
  void begin();
  void commit();
  void rollback() noexcept;

  // The server of the live connection ("" when not connected), for logs and tests.
  std::string server() const;
  // Prepared statements held on the live connection.
  std::size_t prepared_statements() const { return statements_.size(); }

 private:
  // The prepared statement for this SQL text, prepared once per connection (statements_).
  sql::PreparedStatement& prepare(const std::string& sql_text);
  void ensure_connected();
  bool try_connect(std::size_t index);
  void disconnect() noexcept;
  void handle_failure(const sql::SQLException& e, int attempt);
  unsigned read_timeout_s() const;
  sql::PreparedStatement& bound(const std::string& sql_text, const Params& params);
  void fit_statement_timeout();
  Clock::duration remaining() const;

  std::vector<DatabaseTarget> targets_;
  ConnectionOptions options_;
  ServerSelector selector_;
  std::unique_ptr<sql::Connection> driver_connection_;  // to the selector's current server
  bool ever_connected_ = false;
  std::string last_connect_error_;  // for the caller's error message: "where: why"
  Clock::time_point deadline_ = Clock::time_point::max();
  unsigned session_timeout_ms_ = 0;  // max_statement_time of the session now (0: none set)
  // Prepared statements by SQL text; the one in use is the one being run, dropped if it fails.
  StatementCache<sql::PreparedStatement> statements_;  // made in the .cpp: a complete type
  Clock::time_point running_since_{};                  // when the statement being run was sent
};

}  // namespace connector::db
