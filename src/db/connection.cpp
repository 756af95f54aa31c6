#include "db/connection.h"

#include <cppconn/datatype.h>
#include <cppconn/prepared_statement.h>
#include <cppconn/statement.h>
#include <mysql_connection.h>
#include <mysql_driver.h>

#include "db/mariadb_errors.h"
#include "db/session_timeouts.h"
#include "metrics/scoreboard.h"
#include "util/log.h"

namespace connector::db {
namespace {

sql::mysql::MySQL_Driver* driver() { return sql::mysql::get_mysql_driver_instance(); }

// The client's timeouts come from the request's budget (db/session_timeouts.h).
sql::ConnectOptionsMap connect_options(const DatabaseTarget& target,
                                       const ConnectionOptions& options, unsigned read_timeout_s,
                                       unsigned connect_timeout_s) {
  sql::ConnectOptionsMap map;
  const auto& endpoint = target.endpoint;
  map["hostName"] = endpoint.socket.empty() ? sql::SQLString("tcp://" + endpoint.host)
                                            : sql::SQLString("unix://" + endpoint.socket);
  if (endpoint.socket.empty()) map["port"] = static_cast<int>(endpoint.port);
  map["userName"] = sql::SQLString(target.user);
  map["password"] = sql::SQLString(target.password);
  map["schema"] = sql::SQLString(options.database);
  map["OPT_CONNECT_TIMEOUT"] = static_cast<int>(connect_timeout_s);
  map["OPT_READ_TIMEOUT"] = static_cast<int>(read_timeout_s);
  map["OPT_WRITE_TIMEOUT"] = static_cast<int>(read_timeout_s);
  map["OPT_RECONNECT"] = false;  // we reconnect ourselves, re-preparing statements
  map["OPT_CHARSET_NAME"] = sql::SQLString("utf8mb4");
  return map;
}

std::vector<ServerSelector::Checks> checks_of(const std::vector<DatabaseTarget>& targets) {
  std::vector<ServerSelector::Checks> checks;
  checks.reserve(targets.size());
  for (const auto& target : targets) checks.push_back({target.breaker, target.rotation});
  return checks;
}

void bind(sql::PreparedStatement& statement, const Params& params) {
  int index = 1;
  for (const auto& param : params) {
    if (const auto* text = std::get_if<std::string>(&param)) {
      statement.setString(index, *text);
    } else if (const auto* number = std::get_if<std::uint64_t>(&param)) {
      statement.setUInt64(index, *number);
    } else {
      statement.setNull(index, sql::DataType::VARCHAR);
    }
    ++index;
  }
}

}  // namespace

void init_driver() { driver(); }

DriverThreadScope::DriverThreadScope() { driver()->threadInit(); }
DriverThreadScope::~DriverThreadScope() { driver()->threadEnd(); }

Connection::Connection(std::vector<DatabaseTarget> targets, ConnectionOptions options, bool probe)
    : targets_(std::move(targets)),
      options_(std::move(options)),
      selector_(checks_of(targets_), std::chrono::seconds(options_.failback_s), probe),
      statements_(kMaxStatements) {}

Connection::~Connection() { disconnect(); }

void Connection::disconnect() noexcept {
  statements_.clear();  // statements must go before their connection
  session_timeout_ms_ = 0;
  try {
    driver_connection_.reset();
  } catch (...) {  // closing a dead connection may throw; it is gone either way
  }
}

std::string Connection::server() const {
  return driver_connection_ ? targets_[selector_.current()].endpoint.describe() : std::string();
}

Connection::Clock::duration Connection::remaining() const {
  if (deadline_ == Clock::time_point::max()) return Clock::duration::max();
  return deadline_ - Clock::now();
}

unsigned Connection::read_timeout_s() const {
  return client_read_timeout_s(options_.read_timeout_s, options_.statement_timeout_ms);
}

bool Connection::try_connect(std::size_t index) {
  const auto left = remaining();
  if (left <= Clock::duration::zero()) {
    last_connect_error_ = "no time left in the request's budget to connect";
    return false;
  }
  const auto& target = targets_[index];
  try {
    const auto connect_timeout_s = client_connect_timeout_s(left, options_.connect_timeout_s);
    auto options = connect_options(target, options_, read_timeout_s(), connect_timeout_s);
    driver_connection_.reset(driver()->connect(options));
    fit_statement_timeout();
  } catch (const sql::SQLException& e) {
    selector_.connect_failed(index, is_no_answer_error(e.getErrorCode()));
    disconnect();
    // The message names no password; it may name the host, so it stays in the log only.
    const std::string reason =
        std::string(e.what()) + " (code " + std::to_string(e.getErrorCode()) + ")";
    util::log_warning("database connect to " + target.endpoint.describe() + " failed: " + reason);
    last_connect_error_ = target.endpoint.describe() + ": " + reason;
    return false;
  }
  if (ever_connected_) metrics::increment(&metrics::Scoreboard::db_reconnects);
  ever_connected_ = true;
  selector_.connected(index);
  return true;
}

void Connection::ensure_connected() {
  if (remaining() <= Clock::duration::zero()) {
    throw DatabaseUnavailable("the request's time budget is spent");
  }
  // A live connection to a server that others found hung, or that fell out of rotation, is not
  // used either.
  if (driver_connection_ && !driver_connection_->isClosed() && selector_.keep_current()) return;
  disconnect();
  for (std::size_t i = 0; i < targets_.size(); ++i) {
    switch (selector_.consider(i)) {
      case ServerSelector::Verdict::kBreakerOpen:
        last_connect_error_ =
            targets_[i].endpoint.describe() + ": did not answer lately; waiting for a probe";
        break;
      case ServerSelector::Verdict::kOutOfRotation:
        last_connect_error_ =
            targets_[i].endpoint.describe() + ": out of rotation (replication lag)";
        break;
      case ServerSelector::Verdict::kPausing:
        break;
      case ServerSelector::Verdict::kTry:
        if (try_connect(i)) return;
        break;
    }
  }
  // When every server was skipped for its reconnect pause, the last error is the one that
  // started the pause.
  throw DatabaseUnavailable("no database server answers (last: " + last_connect_error_ + ")");
}

void Connection::handle_failure(const sql::SQLException& e, int attempt) {
  metrics::increment(&metrics::Scoreboard::db_errors);
  const int code = e.getErrorCode();
  const std::string what =
      "database " + server() + ": " + e.what() + " (code " + std::to_string(code) + ")";
  const bool live = driver_connection_ && !driver_connection_->isClosed();
  // A statement stopped by a timeout is sound and stays prepared; any other failed one goes.
  if (!is_timeout_error(code) && driver_connection_) statements_.drop_in_use();
  if (is_server_state_error(code) && live) {
    // The server answered, about its own state: a retry would spend the budget again or meet
    // the same full cache, and the connection itself is sound, so it is kept.
    selector_.answered();
    util::log_warning(what + ": answered 503");
    throw DatabaseUnavailable("the database cannot serve this statement now");
  }
  const bool lost = is_unavailable_error(code) || !live;
  if (!lost) {
    selector_.answered();
    throw DatabaseError("database error " + std::to_string(code) + ": " + e.what());
  }
  const bool retry = attempt == 0 && remaining() > Clock::duration::zero();
  // A statement that waited out the client's read timeout met a hung server: it counts towards
  // that server's breaker, and the retry skips it (its reconnect pause). A connection closed
  // at once (a restart, KILL, a killed replica) is simply replaced.
  if (driver_connection_ && is_no_answer_error(code) &&
      waited_out_read_timeout(Clock::now() - running_since_, read_timeout_s())) {
    selector_.hung();
  }
  util::log_warning(what + (retry ? ", reconnecting" : ""));
  disconnect();
  if (!retry) throw DatabaseUnavailable("the database cannot answer now");
}

// The server stops a statement at what is left of the request's budget, and always before the
// client's read timeout would (so a slow statement is never mistaken for a hung server).
void Connection::fit_statement_timeout() {
  const unsigned budget = options_.statement_timeout_ms;
  if (budget == 0) return;
  const unsigned wanted = session_statement_timeout_ms(budget, read_timeout_s(), remaining());
  if (!statement_timeout_changes(session_timeout_ms_, wanted)) return;
  std::unique_ptr<sql::Statement> statement(driver_connection_->createStatement());
  statement->execute(statement_timeout_sql(wanted));
  session_timeout_ms_ = wanted;
}

sql::PreparedStatement& Connection::prepare(const std::string& sql_text) {
  // Connector/C++ swallows a failed close (a dropped statement) on a broken connection.
  return statements_.use(sql_text, [this](const std::string& text) {
    return std::unique_ptr<sql::PreparedStatement>(driver_connection_->prepareStatement(text));
  });
}

sql::PreparedStatement& Connection::bound(const std::string& sql_text, const Params& params) {
  running_since_ = Clock::now();  // before the first round trip of this statement
  fit_statement_timeout();
  auto& prepared = prepare(sql_text);
  bind(prepared, params);
  return prepared;
}

std::unique_ptr<sql::ResultSet> Connection::query(const std::string& sql_text,
                                                  const Params& params) {
  std::unique_ptr<sql::ResultSet> rs(bound(sql_text, params).executeQuery());
  statements_.finished();
  return rs;
}

std::uint64_t Connection::execute(const std::string& sql_text, const Params& params) {
  const auto changed = static_cast<std::uint64_t>(bound(sql_text, params).executeUpdate());
  statements_.finished();
  return changed;
}

void Connection::begin() {
  ensure_connected();
  running_since_ = Clock::now();
  driver_connection_->setAutoCommit(false);
}

void Connection::commit() {
  running_since_ = Clock::now();
  driver_connection_->commit();
  driver_connection_->setAutoCommit(true);
}

void Connection::rollback() noexcept {
  try {
    if (driver_connection_) {
      driver_connection_->rollback();
      driver_connection_->setAutoCommit(true);
    }
  } catch (...) {
    disconnect();
  }
}

}  // namespace connector::db
