#include "db/mariadb_errors.h"

#include <algorithm>
#include <array>

namespace connector::db {
namespace {

constexpr std::array kTable = {
    // The server did not answer.
    ErrorCode{2002, ErrorClass::kNoAnswer},  // CR_CONNECTION_ERROR
    ErrorCode{2003, ErrorClass::kNoAnswer},  // CR_CONN_HOST_ERROR
    ErrorCode{2006, ErrorClass::kNoAnswer},  // CR_SERVER_GONE_ERROR
    ErrorCode{2013, ErrorClass::kNoAnswer},  // CR_SERVER_LOST
    ErrorCode{2055, ErrorClass::kNoAnswer},  // CR_SERVER_LOST_EXTENDED
    ErrorCode{4031, ErrorClass::kNoAnswer},  // ER_CLIENT_INTERACTION_TIMEOUT
    // The server refused the connection for now.
    ErrorCode{1040, ErrorClass::kRefused},  // ER_CON_COUNT_ERROR: too many connections
    ErrorCode{1044, ErrorClass::kRefused},  // ER_DBACCESS_DENIED_ERROR
    ErrorCode{1045, ErrorClass::kRefused},  // ER_ACCESS_DENIED_ERROR
    ErrorCode{1142, ErrorClass::kRefused},  // ER_TABLEACCESS_DENIED_ERROR
    ErrorCode{1143, ErrorClass::kRefused},  // ER_COLUMNACCESS_DENIED_ERROR
    ErrorCode{1053, ErrorClass::kRefused},  // ER_SERVER_SHUTDOWN
    // --read-only: a replica or a demoted primary.
    ErrorCode{1290, ErrorClass::kRefused},  // ER_OPTION_PREVENTS_STATEMENT
    ErrorCode{1317, ErrorClass::kRefused},  // ER_QUERY_INTERRUPTED
    ErrorCode{1927, ErrorClass::kRefused},  // ER_CONNECTION_KILLED
    // The request's time budget, spent on the server.
    ErrorCode{1205, ErrorClass::kTimeout},  // ER_LOCK_WAIT_TIMEOUT (lock_wait_timeout, innodb_...)
    ErrorCode{1969, ErrorClass::kTimeout},  // ER_STATEMENT_TIMEOUT (max_statement_time)
    // The server's statement cache is full.
    ErrorCode{1461, ErrorClass::kStatementLimit},  // ER_MAX_PREPARED_STMT_COUNT_REACHED
};

}  // namespace

std::span<const ErrorCode> error_classes() { return kTable; }

ErrorClass classify_error(int error_code) {
  const auto* found = std::find_if(kTable.begin(), kTable.end(), [error_code](const ErrorCode& e) {
    return e.code == error_code;
  });
  return found == kTable.end() ? ErrorClass::kOther : found->error_class;
}

bool is_unavailable_error(int error_code) {
  const auto c = classify_error(error_code);
  return c == ErrorClass::kNoAnswer || c == ErrorClass::kRefused || c == ErrorClass::kTimeout;
}

bool is_server_state_error(int error_code) {
  const auto c = classify_error(error_code);
  return c == ErrorClass::kTimeout || c == ErrorClass::kStatementLimit;
}

bool is_timeout_error(int error_code) { return classify_error(error_code) == ErrorClass::kTimeout; }

bool is_no_answer_error(int error_code) {
  return classify_error(error_code) == ErrorClass::kNoAnswer;
}

}  // namespace connector::db
