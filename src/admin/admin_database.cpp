#include "admin/admin_database.h"

#include "db/targets.h"

namespace connector::admin {
namespace {

// The operator's commands run bulk statements: rebuilding the counters over 2,000,000 records
// takes tens of seconds, which the request path's read timeout (db_read_timeout_s, 5 s) would
// cut as a hung server. Ten minutes still ends a command whose server hangs.
constexpr unsigned kAdminReadTimeoutS = 600;

}  // namespace

db::Connection admin_database(const config::Config& config) {
  db::init_driver();
  auto options = db::connection_options(config.db);
  options.read_timeout_s = kAdminReadTimeoutS;
  return db::Connection({{config.db.primary(), config.db.user, config.db.password}}, options);
}

}  // namespace connector::admin
