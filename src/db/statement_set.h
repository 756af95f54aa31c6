#pragma once
// Every statement text a pool thread's connections can prepare: the history set
// (all_history_statements(), db/history_statements.h) and the others, each the very text its
// module runs (the reference tables', the supply's, the readiness probe's, the deposit
// account's, the change feed's). The replica monitor's and the prober's statements run on
// connections of their own and are not here. Whatever clients send, a connection prepares no
// more than these, within Connection::kMaxStatements (test_history_statements);
// tests/endpoints-dump prints both counts, from which test_database_boundary and the documents'
// numbers (test_endpoint_descriptions) derive.
#include <string>
#include <vector>

namespace connector::db {

// The statements besides the history set.
std::vector<std::string> other_statements();

}  // namespace connector::db
