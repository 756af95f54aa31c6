#pragma once
// MariaDB's error codes (the server's ER_* and the client library's CR_*) by what they mean for
// a connection, in one table (kErrorClasses): the connection (db/connection.h) decides from the
// class alone whether a failed statement is retried, kept, dropped or counts against its
// server's breaker. A code not in the table is a bug or a schema mismatch (ErrorClass::kOther).
#include <span>

namespace connector::db {

enum class ErrorClass {
  // Anything else: this statement is wrong (a 500).
  kOther,
  // The server did not answer at all (down, unreachable, gone, hung past the read timeout): the
  // connection is lost, and it counts towards opening the server's circuit breaker.
  kNoAnswer,
  // The server answered that it cannot serve the connection now (too many connections, shutting
  // down, read-only, the connection killed, access refused while grants change): the connection
  // is replaced, and a connection keeps the privileges it saw at connect, so a new one picks up
  // fixed grants without a restart.
  kRefused,
  // The request's time budget ran out on the server (max_statement_time, a lock wait): a 503 at
  // once, the connection and the statement kept.
  kTimeout,
  // The server's statement cache is full (max_prepared_stmt_count): a 503 at once, the
  // connection kept, the statement dropped.
  kStatementLimit,
};

struct ErrorCode {
  int code;
  ErrorClass error_class;
};

// Every code the connection knows, with its class.
std::span<const ErrorCode> error_classes();

// The class of a code (kOther when the table does not list it).
ErrorClass classify_error(int error_code);

// "The server cannot answer now" rather than "this statement is wrong": the connection is
// replaced, or the request answered 503 (no answer, refused, timeout).
bool is_unavailable_error(int error_code);
// About the server's own state, not the connection's (timeout, statement limit): the caller gets
// DatabaseUnavailable at once, without a retry; the connection is kept.
bool is_server_state_error(int error_code);
// The timeouts among them (max_statement_time, lock waits): the statement stays prepared.
bool is_timeout_error(int error_code);
// No answer at all: counts towards the server's breaker.
bool is_no_answer_error(int error_code);

}  // namespace connector::db
