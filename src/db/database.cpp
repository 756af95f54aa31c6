#include "db/database.h"

#include <cppconn/prepared_statement.h>
#include <cppconn/statement.h>
#include <mysql_connection.h>
#include <mysql_driver.h>

#include <algorithm>
#include <array>

#include "metrics/scoreboard.h"
#include "util/log.h"

namespace connector::db {
namespace {

// After a failed connect, a server is skipped for this long instead of hammering it.
constexpr auto kReconnectPause = std::chrono::milliseconds(200);

sql::mysql::MySQL_Driver* driver() { return sql::mysql::get_mysql_driver_instance(); }

sql::ConnectOptionsMap connect_options(const DatabaseTarget& target,
                                       const ConnectionOptions& options) {
  sql::ConnectOptionsMap map;
  const auto& endpoint = target.endpoint;
  map["hostName"] = endpoint.socket.empty() ? sql::SQLString("tcp://" + endpoint.host)
                                            : sql::SQLString("unix://" + endpoint.socket);
  if (endpoint.socket.empty()) map["port"] = static_cast<int>(endpoint.port);
  map["userName"] = sql::SQLString(target.user);
  map["password"] = sql::SQLString(target.password);
  map["schema"] = sql::SQLString(options.database);
  map["OPT_CONNECT_TIMEOUT"] = static_cast<int>(options.connect_timeout_s);
  map["OPT_READ_TIMEOUT"] = static_cast<int>(options.read_timeout_s);
  map["OPT_WRITE_TIMEOUT"] = static_cast<int>(options.read_timeout_s);
  map["OPT_RECONNECT"] = false;  // we reconnect ourselves, re-preparing statements
  map["OPT_CHARSET_NAME"] = sql::SQLString("utf8mb4");
  return map;
}

// The request budget, enforced by the server: statements stop at max_statement_time, and lock
// waits at the same bound, so one slow query cannot pin a worker thread.
void apply_statement_timeout(sql::Connection& connection, unsigned timeout_ms) {
  if (timeout_ms == 0) return;
  const unsigned lock_wait_s = std::max(1u, (timeout_ms + 999) / 1000);
  std::unique_ptr<sql::Statement> statement(connection.createStatement());
  statement->execute("SET SESSION max_statement_time = " + std::to_string(timeout_ms / 1000) + "." +
                     std::to_string(timeout_ms % 1000 + 1000).substr(1) +
                     ", lock_wait_timeout = " + std::to_string(lock_wait_s) +
                     ", innodb_lock_wait_timeout = " + std::to_string(lock_wait_s));
}

}  // namespace

bool is_unavailable_error(int error_code) {
  static constexpr std::array kCodes = {
      1040,  // ER_CON_COUNT_ERROR: too many connections
      // Access refused: grants are being changed. A connection keeps the database privileges
      // it saw at connect, so it is replaced, and picks up fixed grants without a restart.
      1044,  // ER_DBACCESS_DENIED_ERROR
      1045,  // ER_ACCESS_DENIED_ERROR
      1142,  // ER_TABLEACCESS_DENIED_ERROR
      1143,  // ER_COLUMNACCESS_DENIED_ERROR
      1053,  // ER_SERVER_SHUTDOWN
      1205,  // ER_LOCK_WAIT_TIMEOUT
      1290,  // ER_OPTION_PREVENTS_STATEMENT (--read-only: a replica or a demoted primary)
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

bool is_budget_error(int error_code) {
  return error_code == 1205      // ER_LOCK_WAIT_TIMEOUT (lock_wait_timeout, innodb_lock_...)
         || error_code == 1969;  // ER_STATEMENT_TIMEOUT (max_statement_time)
}

void init_driver() { driver(); }

DriverThreadScope::DriverThreadScope() { driver()->threadInit(); }
DriverThreadScope::~DriverThreadScope() { driver()->threadEnd(); }

std::vector<DatabaseTarget> read_targets(const config::DatabaseSettings& s) {
  std::vector<DatabaseTarget> targets;
  for (const auto& replica : s.replicas) targets.push_back({replica, s.user, s.password});
  targets.push_back({s.primary(), s.user, s.password});
  return targets;
}

std::vector<DatabaseTarget> write_targets(const config::DatabaseSettings& s) {
  if (s.write_user.empty()) return {{s.primary(), s.user, s.password}};
  return {{s.primary(), s.write_user, s.write_password}};
}

ConnectionOptions connection_options(const config::DatabaseSettings& s,
                                     unsigned statement_timeout_ms) {
  return {s.name, s.connect_timeout_s, s.read_timeout_s, statement_timeout_ms, s.failback_s};
}

Database::Database(std::vector<DatabaseTarget> targets, ConnectionOptions options)
    : options_(std::move(options)) {
  for (auto& target : targets) servers_.push_back({std::move(target)});
}

Database::~Database() { disconnect(); }

void Database::disconnect() noexcept {
  statements_.clear();  // statements must go before their connection
  try {
    connection_.reset();
  } catch (...) {  // closing a dead connection may throw; it is gone either way
  }
}

std::string Database::server() const {
  return connection_ ? servers_[current_].target.endpoint.describe() : std::string();
}

bool Database::try_connect(std::size_t index) {
  auto& server = servers_[index];
  const auto now = std::chrono::steady_clock::now();
  if (now - server.last_failure < kReconnectPause) return false;
  try {
    auto options = connect_options(server.target, options_);
    connection_.reset(driver()->connect(options));
    apply_statement_timeout(*connection_, options_.statement_timeout_ms);
  } catch (const sql::SQLException& e) {
    server.last_failure = now;
    disconnect();
    // The message names no password; it may name the host, so it stays in the log only.
    const std::string reason =
        std::string(e.what()) + " (code " + std::to_string(e.getErrorCode()) + ")";
    util::log_warning("database connect to " + server.target.endpoint.describe() +
                      " failed: " + reason);
    last_connect_error_ = server.target.endpoint.describe() + ": " + reason;
    return false;
  }
  if (ever_connected_) metrics::increment(&metrics::Scoreboard::db_reconnects);
  ever_connected_ = true;
  current_ = index;
  connected_at_ = now;
  return true;
}

void Database::ensure_connected() {
  if (connection_ && !connection_->isClosed()) {
    const bool on_fallback = current_ != 0;
    const auto failback_after = std::chrono::seconds(options_.failback_s);
    if (!on_fallback || std::chrono::steady_clock::now() - connected_at_ < failback_after) return;
  }
  disconnect();
  for (std::size_t i = 0; i < servers_.size(); ++i) {
    if (try_connect(i)) return;
  }
  // When every server was skipped for its reconnect pause, the last error is the one that
  // started the pause.
  throw DatabaseUnavailable("no database server answers (last: " + last_connect_error_ + ")");
}

void Database::handle_failure(const sql::SQLException& e, int attempt) {
  metrics::increment(&metrics::Scoreboard::db_errors);
  const int code = e.getErrorCode();
  if (is_budget_error(code) && connection_ && !connection_->isClosed()) {
    // The request's time budget ran out in the server: a retry would spend it a second time,
    // and the connection itself is sound, so it is kept.
    util::log_warning("database " + server() + ": " + e.what() + " (code " + std::to_string(code) +
                      "): the request's time budget is spent");
    throw DatabaseUnavailable("the database did not answer within the request's time budget");
  }
  const bool lost = is_unavailable_error(code) || !connection_ || connection_->isClosed();
  if (!lost) {
    throw DatabaseError("database error " + std::to_string(code) + ": " + e.what());
  }
  util::log_warning("database " + server() + ": " + e.what() + " (code " + std::to_string(code) +
                    ")" + (attempt == 0 ? ", reconnecting" : ""));
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
