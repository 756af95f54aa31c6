#pragma once
// What one pool thread answers with: its own database sessions (the read and the write
// account), the history reader, deposit accounts and readiness check over them (db/interfaces.h),
// and a router. Built in the thread, the driver's per-thread
// setup first.
#include <string>
#include <vector>

#include "api/router.h"
#include "config/config.h"
#include "db/connection.h"
#include "db/interfaces.h"
#include "db/new_row_budget.h"
#include "db/refreshed_reference.h"
#include "db/refreshed_supply.h"

namespace connector::fcgi {

class ThreadServices {
 public:
  ThreadServices(const config::Config& config, db::CircuitBreakers& breakers,
                 db::RefreshedReference& reference, db::RefreshedSupply& supply,
                 const std::vector<std::string>& read_servers);

  // One deadline for all the request's database work, on both connections.
  void set_deadline(db::Connection::Clock::time_point deadline);
  api::Router& router() { return router_; }

 private:
  db::DriverThreadScope driver_thread_;
  db::Connection reader_;
  db::Connection writer_;
  db::MariaDbHistoryReader history_;
  db::NewRowBudget new_rows_;
  db::MariaDbDepositAccounts accounts_;
  db::MariaDbReadinessCheck readiness_;
  api::Router router_;
};

}  // namespace connector::fcgi
