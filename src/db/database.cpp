#include "db/database.h"

#include <cppconn/exception.h>
#include <cppconn/prepared_statement.h>
#include <cppconn/statement.h>
#include <mysql_connection.h>
#include <mysql_driver.h>

#include <algorithm>
#include <array>

#include "util/log.h"

namespace connector::db {
namespace {

// After a failed connect, fail fast for this long instead of hammering a server that is down.
constexpr auto kReconnectPause = std::chrono::milliseconds(200);

sql::mysql::MySQL_Driver* driver() { return sql::mysql::get_mysql_driver_instance(); }

}  // namespace

bool is_unavailable_error(int error_code) {
  static constexpr std::array kCodes = {
      1040,  // ER_CON_COUNT_ERROR: too many connections
      1053,  // ER_SERVER_SHUTDOWN
      1205,  // ER_LOCK_WAIT_TIMEOUT
      1317,  // ER_QUERY_INTERRUPTED
      1927,  // ER_CONNECTION_KILLED
      1969,  // ER_STATEMENT_TIMEOUT (max_statement_time)
      2002,  // CR_CONNECTION_ERROR
      2003,  // CR_CONN_HOST_ERROR
      2006,  // CR_SERVER_GONE_ERROR
      2013,  // CR_SERVER_LOST
      2055,  // CR_SERVER_LOST_EXTENDED
      4031,  // ER_CLIENT_INTERACTION_TIMEOUT
  };
  return std::find(kCodes.begin(), kCodes.end(), error_code) != kCodes.end();
}

void init_driver() { driver(); }

DriverThreadScope::DriverThreadScope() { driver()->threadInit(); }
DriverThreadScope::~DriverThreadScope() { driver()->threadEnd(); }

Database::Database(config::DatabaseSettings settings) : settings_(std::move(settings)) {}

Database::~Database() { disconnect(); }

void Database::disconnect() noexcept {
  statements_.clear();  // statements must go before their connection
  try {
    connection_.reset();
  } catch (...) {  // closing a dead connection may throw; it is gone either way
  }
}

void Database::ensure_connected() {
  if (connection_ && !connection_->isClosed()) return;
  disconnect();
  const auto now = std::chrono::steady_clock::now();
  if (now - last_connect_failure_ < kReconnectPause) {
    throw DatabaseUnavailable("database connection failed moments ago");
  }
  sql::ConnectOptionsMap options;
  options["hostName"] = settings_.socket.empty() ? sql::SQLString("tcp://" + settings_.host)
                                                 : sql::SQLString("unix://" + settings_.socket);
  if (settings_.socket.empty()) options["port"] = static_cast<int>(settings_.port);
  options["userName"] = sql::SQLString(settings_.user);
  options["password"] = sql::SQLString(settings_.password);
  options["schema"] = sql::SQLString(settings_.name);
  options["OPT_CONNECT_TIMEOUT"] = static_cast<int>(settings_.connect_timeout_s);
  options["OPT_READ_TIMEOUT"] = static_cast<int>(settings_.read_timeout_s);
  options["OPT_WRITE_TIMEOUT"] = static_cast<int>(settings_.read_timeout_s);
  options["OPT_RECONNECT"] = false;  // we reconnect ourselves, re-preparing statements
  options["OPT_CHARSET_NAME"] = sql::SQLString("utf8mb4");
  try {
    connection_.reset(driver()->connect(options));
  } catch (const sql::SQLException& e) {
    last_connect_failure_ = now;
    connection_.reset();
    // The message names no password; it may name the host, so it stays in the log only.
    util::log_warning("database connect failed: " + std::string(e.what()) + " (code " +
                      std::to_string(e.getErrorCode()) + ")");
    throw DatabaseUnavailable("cannot connect to the database");
  }
}

void Database::handle_failure(const sql::SQLException& e, int attempt) {
  const int code = e.getErrorCode();
  const bool lost = is_unavailable_error(code) || !connection_ || connection_->isClosed();
  if (!lost) {
    throw DatabaseError("database error " + std::to_string(code) + ": " + e.what());
  }
  util::log_warning("database connection lost: " + std::string(e.what()) + " (code " +
                    std::to_string(code) + ")" + (attempt == 0 ? ", reconnecting" : ""));
  disconnect();
  if (attempt > 0) throw DatabaseUnavailable("the database cannot answer now");
}

sql::PreparedStatement& Database::prepare(const std::string& sql_text) {
  auto& slot = statements_[sql_text];
  if (!slot) slot.reset(connection_->prepareStatement(sql_text));
  return *slot;
}

void Database::begin() {
  ensure_connected();
  connection_->setAutoCommit(false);
}

void Database::commit() {
  connection_->commit();
  connection_->setAutoCommit(true);
}

void Database::rollback() noexcept {
  try {
    if (connection_) {
      connection_->rollback();
      connection_->setAutoCommit(true);
    }
  } catch (...) {
    disconnect();
  }
}

}  // namespace connector::db
