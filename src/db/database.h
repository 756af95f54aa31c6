#pragma once
// A MariaDB connection with its prepared statements, owned by one worker thread, over an
// ordered list of servers (read replicas, then the primary). It reconnects by itself: a query
// that fails because its server went away (restart, killed connection, failover) is retried once
// on a fresh connection to the first server that answers; if none can, the caller gets
// DatabaseUnavailable (a 503), and the next request tries again. A statement stopped by the
// request's time budget is not retried: DatabaseUnavailable at once, the connection kept.
#include <cppconn/exception.h>

#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "config/config.h"

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
// thread-safe); each thread that uses a Database then holds a DriverThreadScope.
void init_driver();
class DriverThreadScope {
 public:
  DriverThreadScope();
  ~DriverThreadScope();
  DriverThreadScope(const DriverThreadScope&) = delete;
  DriverThreadScope& operator=(const DriverThreadScope&) = delete;
};

// One server and the account to use on it.
struct DatabaseTarget {
  config::DatabaseEndpoint endpoint;
  std::string user;
  std::string password;
};

struct ConnectionOptions {
  std::string database;
  unsigned connect_timeout_s = 2;
  unsigned read_timeout_s = 5;
  // The time budget of one statement, enforced by the server (max_statement_time, lock waits);
  // 0 leaves the server's defaults.
  unsigned statement_timeout_ms = 0;
  // How long to stay on a fallback server before trying the preferred one again.
  unsigned failback_s = 30;
};

class Database {
 public:
  Database(std::vector<DatabaseTarget> targets, ConnectionOptions options);
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  // Runs work(*this) on a live connection, retrying once on a new connection when the old one
  // was lost. work must be safe to repeat (reads, or idempotent writes).
  template <typename Work>
  auto run(Work&& work) -> decltype(work(*this)) {
    for (int attempt = 0;; ++attempt) {
      try {
        ensure_connected();
        return work(*this);
      } catch (const sql::SQLException& e) {
        handle_failure(e, attempt);  // throws when it should not be retried
      }
    }
  }

  // The prepared statement for this SQL text, prepared once per connection.
  sql::PreparedStatement& prepare(const std::string& sql_text);

  // Explicit transactions for the admin tool's all-or-nothing import.
  void begin();
  void commit();
  void rollback() noexcept;

  // The server of the live connection ("" when not connected), for logs and tests.
  std::string server() const;

 private:
  void ensure_connected();
  bool try_connect(std::size_t index);
  void disconnect() noexcept;
  void handle_failure(const sql::SQLException& e, int attempt);

  struct Server {
    DatabaseTarget target;
    std::chrono::steady_clock::time_point last_failure{};
  };

  std::vector<Server> servers_;
  ConnectionOptions options_;
  std::unique_ptr<sql::Connection> connection_;
  std::size_t current_ = 0;  // index of the connected server
  std::chrono::steady_clock::time_point connected_at_{};
  bool ever_connected_ = false;
  std::string last_connect_error_;  // for the caller's error message: "where: why"
  std::unordered_map<std::string, std::unique_ptr<sql::PreparedStatement>> statements_;
};

// Reads: the replicas in order, then the primary, with the read account.
std::vector<DatabaseTarget> read_targets(const config::DatabaseSettings& settings);
// The one write: the primary, with the write account (the read account when none is set).
std::vector<DatabaseTarget> write_targets(const config::DatabaseSettings& settings);
ConnectionOptions connection_options(const config::DatabaseSettings& settings,
                                     unsigned statement_timeout_ms = 0);

// True for MariaDB/client error codes that mean "the server cannot answer now" rather than
// "this statement is wrong".
bool is_unavailable_error(int error_code);

// True for the errors of a statement stopped by the request's time budget (max_statement_time,
// lock waits): the caller gets DatabaseUnavailable at once, without a retry.
bool is_budget_error(int error_code);

}  // namespace connector::db
