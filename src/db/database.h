#pragma once
// One MariaDB connection with its prepared statements, owned by one worker thread.
// It reconnects by itself: a query that fails because the server went away (restart, killed
// connection) is retried once on a fresh connection; if the server still cannot answer, the
// caller gets DatabaseUnavailable (a 503), and the next request tries again.
#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <unordered_map>

#include "config/config.h"

#include <cppconn/exception.h>

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

class Database {
 public:
  explicit Database(config::DatabaseSettings settings);
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

  bool connected() const { return connection_ != nullptr; }

 private:
  void ensure_connected();
  void disconnect() noexcept;
  [[noreturn]] void rethrow_as_unavailable(const std::string& what);
  void handle_failure(const sql::SQLException& e, int attempt);

  config::DatabaseSettings settings_;
  std::unique_ptr<sql::Connection> connection_;
  std::unordered_map<std::string, std::unique_ptr<sql::PreparedStatement>> statements_;
  std::chrono::steady_clock::time_point last_connect_failure_{};
};

// True for MariaDB/client error codes that mean "the server cannot answer now" rather than
// "this statement is wrong".
bool is_unavailable_error(int error_code);

}  // namespace connector::db
