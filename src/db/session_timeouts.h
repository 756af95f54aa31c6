#pragma once
// The request's deadline turned into the limits a MariaDB connection understands: the client's
// connect and read timeouts (whole seconds) and the session's max_statement_time and lock waits.
// Pure arithmetic, so each rounding is unit-tested; the connection (db/connection.h) applies them.
//
// Against a server that is hung rather than down only the client can stop a wait: its read
// timeout is the budget in whole seconds, rounded down (so it ends within the budget), at least
// 1 s. The server is told to stop a statement kServerFirstMs before that, so a slow statement on
// a live server ends as the server's own timeout (1969), never as a lost connection.
#include <chrono>
#include <string>

namespace connector::db {

using Duration = std::chrono::steady_clock::duration;

// The server stops a statement this long before the client's read timeout would.
constexpr unsigned kServerFirstMs = 200;
// The session's max_statement_time is changed (one round trip) only when the deadline has moved
// more than this from it: a statement may outlive its request's deadline by at most this much.
constexpr unsigned kStatementTimeoutSlackMs = 50;
// A statement that failed this close to the read timeout waited it out.
constexpr auto kHungMargin = std::chrono::milliseconds(100);

// The client's read (and write) timeout: the budget in whole seconds, rounded down, at least 1,
// at most the configured one (budget_ms 0: no budget, the configured one).
unsigned client_read_timeout_s(unsigned configured_s, unsigned budget_ms);

// The client's connect timeout with `left` of the request's budget (left > 0): whole seconds,
// rounded up so that a budget under a second can connect, never 0 (the client's default), at
// most the configured one.
unsigned client_connect_timeout_s(Duration left, unsigned configured_s);

// The session's max_statement_time for a statement with `left` of the budget (Duration::max():
// no deadline): what is left, at least 1 ms, at most the budget, and kServerFirstMs under the
// read timeout. budget_ms > 0.
unsigned session_statement_timeout_ms(unsigned budget_ms, unsigned read_timeout_s, Duration left);

// Whether a session whose max_statement_time is set_ms (0: none set yet) is set to wanted_ms:
// when none is set, or it differs by more than kStatementTimeoutSlackMs.
bool statement_timeout_changes(unsigned set_ms, unsigned wanted_ms);

// The statement that sets the session's limits: max_statement_time (seconds with 3 decimals)
// and both lock waits (whole seconds, rounded up, at least 1).
std::string statement_timeout_sql(unsigned timeout_ms);

// Whether a statement that got no answer after waiting this long waited out the read timeout:
// the server is hung (it counts against its breaker), not merely restarted.
bool waited_out_read_timeout(Duration waited, unsigned read_timeout_s);

}  // namespace connector::db
