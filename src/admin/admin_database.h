#pragma once
// The database connection of connector-admin's commands: the config's primary, as its db_user
// (the admin account: src/admin/admin.conf.example), with a read timeout for bulk statements.
#include "config/config.h"
#include "db/connection.h"

namespace connector::admin {

db::Connection admin_database(const config::Config& config);

}  // namespace connector::admin
