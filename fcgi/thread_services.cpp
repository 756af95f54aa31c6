#include "thread_services.h"

#include "pool/shared_state.h"

namespace connector::fcgi {

ThreadServices::ThreadServices(const config::Config& config, db::CircuitBreakers& breakers,
                               db::RefreshedReference& reference, db::RefreshedSupply& supply,
                               const std::vector<std::string>& read_servers)
    : reader_(breakers.attach(db::read_targets(config.db)),
              db::connection_options(config.db, config.worker.request_timeout_ms)),
      writer_(breakers.attach(db::write_targets(config.db)),
              db::connection_options(config.db, config.worker.request_timeout_ms)),
      history_(reader_),
      new_rows_(config.worker.new_accounts_per_minute, db::new_row_window()),
      accounts_(reader_, writer_, new_rows_),
      readiness_(reader_),
      router_({.history = history_,
               .accounts = accounts_,
               .readiness = readiness_,
               .reference = reference,
               .supply = supply,
               .pool_state = pool::shared_state(),
               .db_servers = read_servers,
               .events = config.worker.events_publisher.empty() ? nullptr
                                                                : &pool::shared_state().events}) {}

void ThreadServices::set_deadline(db::Connection::Clock::time_point deadline) {
  reader_.set_deadline(deadline);
  writer_.set_deadline(deadline);
}

}  // namespace connector::fcgi
