#include "db/database.h"

#include <cppconn/datatype.h>
#include <cppconn/prepared_statement.h>
#include <cppconn/statement.h>
#include <mysql_connection.h>
#include <mysql_driver.h>

#include <algorithm>

#include "db/mariadb_errors.h"
#include "metrics/scoreboard.h"
#include "util/log.h"

namespace connector::db {
namespace {

// After a failed connect, a server is skipped for this long instead of hammering it.
constexpr auto kReconnectPause = std::chrono::milliseconds(200);

// The session's max_statement_time is changed (one round trip) only when the deadline has moved
// more than this from it: a statement may outlive its request's deadline by at most this much.
constexpr unsigned kStatementTimeoutSlackMs = 50;

// A statement that failed this close to the read timeout waited it out.
constexpr auto kHungMargin = std::chrono::milliseconds(100);

// The server stops a statement this long before the client's read timeout would, so a slow
// statement on a live server ends as the server's own timeout (1969), not as a lost connection.
constexpr unsigned kServerFirstMs = 200;

unsigned whole_seconds_at_least_one(unsigned ms) { return std::max(1u, ms / 1000); }

unsigned effective_read_timeout_s(const ConnectionOptions& options) {
  return options.statement_timeout_ms == 0
             ? options.read_timeout_s
             : std::min(options.read_timeout_s,
                        whole_seconds_at_least_one(options.statement_timeout_ms));
}

sql::mysql::MySQL_Driver* driver() { return sql::mysql::get_mysql_driver_instance(); }

// connect_timeout_s: what is left of the request's budget, at most the configured one. The read
// timeout stops a wait on a server that is hung rather than down: the request's budget in whole
// seconds (rounded down, so it ends within the budget), at most the configured one.
sql::ConnectOptionsMap connect_options(const DatabaseTarget& target,
                                       const ConnectionOptions& options,
                                       unsigned connect_timeout_s) {
  sql::ConnectOptionsMap map;
  const auto& endpoint = target.endpoint;
  map["hostName"] = endpoint.socket.empty() ? sql::SQLString("tcp://" + endpoint.host)
                                            : sql::SQLString("unix://" + endpoint.socket);
  if (endpoint.socket.empty()) map["port"] = static_cast<int>(endpoint.port);
  map["userName"] = sql::SQLString(target.user);
  map["password"] = sql::SQLString(target.password);
  map["schema"] = sql::SQLString(options.database);
  const unsigned read_timeout_s = effective_read_timeout_s(options);
  map["OPT_CONNECT_TIMEOUT"] = static_cast<int>(connect_timeout_s);
  map["OPT_READ_TIMEOUT"] = static_cast<int>(read_timeout_s);
  map["OPT_WRITE_TIMEOUT"] = static_cast<int>(read_timeout_s);
  map["OPT_RECONNECT"] = false;  // we reconnect ourselves, re-preparing statements
  map["OPT_CHARSET_NAME"] = sql::SQLString("utf8mb4");
  return map;
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

std::vector<DatabaseTarget> CircuitBreakers::attach(std::vector<DatabaseTarget> targets) {
  std::lock_guard lock(mutex_);
  for (auto& target : targets) {
    auto& entry = by_server_[target.endpoint.describe()];
    if (!entry.breaker) entry = {target, std::make_unique<CircuitBreaker>(open_count_)};
    target.breaker = entry.breaker.get();
  }
  return targets;
}

std::vector<DatabaseTarget> CircuitBreakers::open_servers() {
  std::lock_guard lock(mutex_);
  std::vector<DatabaseTarget> open;
  for (auto& [name, entry] : by_server_) {
    if (!entry.breaker->open()) continue;
    open.push_back(entry.target);
    open.back().breaker = entry.breaker.get();
  }
  return open;
}

std::vector<DatabaseTarget> read_targets(const config::DatabaseSettings& s) {
  std::vector<DatabaseTarget> targets;
  for (const auto& replica : s.replicas) targets.push_back({replica, s.user, s.password, nullptr});
  targets.push_back({s.primary(), s.user, s.password, nullptr});
  return targets;
}

std::vector<std::string> read_server_addresses(const config::DatabaseSettings& s) {
  std::vector<std::string> addresses;
  for (const auto& target : read_targets(s)) addresses.push_back(target.endpoint.describe());
  return addresses;
}

std::vector<DatabaseTarget> write_targets(const config::DatabaseSettings& s) {
  if (s.write_user.empty()) return {{s.primary(), s.user, s.password, nullptr}};
  return {{s.primary(), s.write_user, s.write_password, nullptr}};
}

ConnectionOptions connection_options(const config::DatabaseSettings& s,
                                     unsigned statement_timeout_ms) {
  return {s.name, s.connect_timeout_s, s.read_timeout_s, statement_timeout_ms, s.failback_s};
}

Database::Database(std::vector<DatabaseTarget> targets, ConnectionOptions options, bool probe)
    : options_(std::move(options)), probe_(probe), statements_(kMaxStatements) {
  for (auto& target : targets) servers_.push_back({std::move(target)});
}

Database::~Database() { disconnect(); }

void Database::disconnect() noexcept {
  statements_.clear();  // statements must go before their connection
  session_timeout_ms_ = 0;
  try {
    connection_.reset();
  } catch (...) {  // closing a dead connection may throw; it is gone either way
  }
}

std::string Database::server() const {
  return connection_ ? servers_[current_].target.endpoint.describe() : std::string();
}

Database::Clock::duration Database::remaining() const {
  if (deadline_ == Clock::time_point::max()) return Clock::duration::max();
  return deadline_ - Clock::now();
}

bool Database::try_connect(std::size_t index) {
  auto& server = servers_[index];
  const auto now = Clock::now();
  if (now - server.last_failure < kReconnectPause) return false;
  const auto left = remaining();
  if (left <= Clock::duration::zero()) {
    last_connect_error_ = "no time left in the request's budget to connect";
    return false;
  }
  // Whole seconds (the client's unit), rounded up so that a budget under a second can connect;
  // never 0, which would mean the client's default.
  const auto left_ms = std::chrono::duration_cast<std::chrono::milliseconds>(left).count();
  const auto connect_timeout_s = static_cast<unsigned>(std::clamp<std::int64_t>(
      (left_ms + 999) / 1000, 1, std::max(1u, options_.connect_timeout_s)));
  try {
    auto options = connect_options(server.target, options_, connect_timeout_s);
    connection_.reset(driver()->connect(options));
    fit_statement_timeout();
  } catch (const sql::SQLException& e) {
    server.last_failure = Clock::now();  // when it failed: a connect may wait its timeout
    disconnect();
    if (is_no_answer_error(e.getErrorCode())) note_no_answer(index);
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
  note_answer();  // the server completed a handshake: it answers
  return true;
}

void Database::ensure_connected() {
  if (remaining() <= Clock::duration::zero()) {
    throw DatabaseUnavailable("the request's time budget is spent");
  }
  // A live connection to a server that others found hung, or that fell out of rotation, is not
  // used either.
  if (connection_ && !connection_->isClosed() && !skipped(current_) && !failback_due()) return;
  disconnect();
  for (std::size_t i = 0; i < servers_.size(); ++i) {
    if (skipped(i)) {
      const auto* breaker = servers_[i].target.breaker;
      last_connect_error_ = servers_[i].target.endpoint.describe() +
                            (breaker->open() ? ": did not answer lately; waiting for a probe"
                                             : ": out of rotation (replication lag)");
      continue;
    }
    if (try_connect(i)) return;
  }
  // When every server was skipped for its reconnect pause, the last error is the one that
  // started the pause.
  throw DatabaseUnavailable("no database server answers (last: " + last_connect_error_ + ")");
}

void Database::handle_failure(const sql::SQLException& e, int attempt) {
  metrics::increment(&metrics::Scoreboard::db_errors);
  const int code = e.getErrorCode();
  const std::string what =
      "database " + server() + ": " + e.what() + " (code " + std::to_string(code) + ")";
  const bool live = connection_ && !connection_->isClosed();
  // A statement stopped by a timeout is sound and stays prepared; any other failed one goes.
  if (!is_timeout_error(code) && connection_) statements_.drop_in_use();
  if (is_server_state_error(code) && live) {
    // The server answered, about its own state: a retry would spend the budget again or meet
    // the same full cache, and the connection itself is sound, so it is kept.
    note_answer();
    util::log_warning(what + ": answered 503");
    throw DatabaseUnavailable("the database cannot serve this statement now");
  }
  const bool lost = is_unavailable_error(code) || !live;
  if (!lost) {
    note_answer();
    throw DatabaseError("database error " + std::to_string(code) + ": " + e.what());
  }
  const bool retry = attempt == 0 && remaining() > Clock::duration::zero();
  // A statement that waited out the client's read timeout met a hung server: it counts towards
  // that server's breaker, and the retry skips it (its reconnect pause). A connection closed
  // at once (a restart, KILL, a killed replica) is simply replaced.
  const auto waited = Clock::now() - running_since_;
  if (connection_ && is_no_answer_error(code) && waited >= read_timeout() - kHungMargin) {
    servers_[current_].last_failure = Clock::now();
    note_no_answer(current_);
  }
  util::log_warning(what + (retry ? ", reconnecting" : ""));
  disconnect();
  if (!retry) throw DatabaseUnavailable("the database cannot answer now");
}

void Database::note_answer() {
  if (auto* breaker = servers_[current_].target.breaker) breaker->record_answer();
}

void Database::note_no_answer(std::size_t server) {
  if (auto* breaker = servers_[server].target.breaker) breaker->record_no_answer();
}

bool Database::skipped(std::size_t server) const {
  const auto* breaker = servers_[server].target.breaker;
  return !probe_ && breaker != nullptr && breaker->skipped();
}

// On a fallback server, a connection goes back to an earlier one once db_failback_s has passed
// since it connected (a server that failed may answer again), or at once when an earlier server
// that has not failed lately is usable again (a replica back in rotation).
bool Database::failback_due() const {
  if (current_ == 0) return false;
  const auto now = Clock::now();
  const auto failback_after = std::chrono::seconds(options_.failback_s);
  if (now - connected_at_ >= failback_after) return true;
  for (std::size_t i = 0; i < current_; ++i) {
    if (!skipped(i) && now - servers_[i].last_failure >= failback_after) return true;
  }
  return false;
}

Database::Clock::duration Database::read_timeout() const {
  return std::chrono::seconds(effective_read_timeout_s(options_));
}

void Database::set_statement_timeout(unsigned timeout_ms) {
  const unsigned lock_wait_s = std::max(1u, (timeout_ms + 999) / 1000);
  std::unique_ptr<sql::Statement> statement(connection_->createStatement());
  statement->execute("SET SESSION max_statement_time = " + std::to_string(timeout_ms / 1000) + "." +
                     std::to_string(timeout_ms % 1000 + 1000).substr(1) +
                     ", lock_wait_timeout = " + std::to_string(lock_wait_s) +
                     ", innodb_lock_wait_timeout = " + std::to_string(lock_wait_s));
  session_timeout_ms_ = timeout_ms;
}

// The server stops a statement at what is left of the request's budget, and always before the
// client's read timeout would (so a slow statement is never mistaken for a hung server).
void Database::fit_statement_timeout() {
  const unsigned budget = options_.statement_timeout_ms;
  if (budget == 0) return;
  const auto read_timeout_ms = static_cast<unsigned>(
      std::chrono::duration_cast<std::chrono::milliseconds>(read_timeout()).count());
  const unsigned longest = std::min(budget, read_timeout_ms - kServerFirstMs);
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(remaining()).count();
  const unsigned wanted =
      static_cast<unsigned>(std::clamp<std::int64_t>(left, 1, static_cast<std::int64_t>(longest)));
  const bool unset = session_timeout_ms_ == 0;
  const bool too_long = wanted + kStatementTimeoutSlackMs < session_timeout_ms_;
  const bool cut_short = session_timeout_ms_ + kStatementTimeoutSlackMs < wanted;
  if (unset || too_long || cut_short) set_statement_timeout(wanted);
}

sql::PreparedStatement& Database::prepare(const std::string& sql_text) {
  // Connector/C++ swallows a failed close (a dropped statement) on a broken connection.
  return statements_.use(sql_text, [this](const std::string& text) {
    return std::unique_ptr<sql::PreparedStatement>(connection_->prepareStatement(text));
  });
}

sql::PreparedStatement& Database::bound(const std::string& sql_text, const Params& params) {
  running_since_ = Clock::now();  // before the first round trip of this statement
  fit_statement_timeout();
  auto& prepared = prepare(sql_text);
  bind(prepared, params);
  return prepared;
}

std::unique_ptr<sql::ResultSet> Database::query(const std::string& sql_text, const Params& params) {
  std::unique_ptr<sql::ResultSet> rs(bound(sql_text, params).executeQuery());
  statements_.finished();
  return rs;
}

std::uint64_t Database::execute(const std::string& sql_text, const Params& params) {
  const auto changed = static_cast<std::uint64_t>(bound(sql_text, params).executeUpdate());
  statements_.finished();
  return changed;
}

void Database::begin() {
  ensure_connected();
  running_since_ = Clock::now();
  connection_->setAutoCommit(false);
}

void Database::commit() {
  running_since_ = Clock::now();
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
