#include "db/statement_set.h"

#include <utility>

#include "db/change_feed.h"
#include "db/deposit_account_writes.h"
#include "db/interfaces.h"
#include "db/refreshed_reference.h"
#include "db/refreshed_supply.h"

namespace connector::db {

std::vector<std::string> other_statements() {
  std::vector<std::string> all = reference_statements();
  all.push_back(supply_statement());
  all.push_back(MariaDbReadinessCheck::statement());
  for (auto& text : deposit_account_statements()) all.push_back(std::move(text));
  for (auto& text : change_feed_statements()) all.push_back(std::move(text));
  return all;
}

}  // namespace connector::db
