#include "db/server_prober.h"

#include "db/refresher.h"
#include "util/clock.h"
#include "util/log.h"

namespace connector::db {

void ServerProber::start() {
  loop_.start<DriverThreadScope>("prober", [this] {
    for (auto& target : breakers_.open_servers()) {
      const std::string name = target.endpoint.describe();
      Connection probe({std::move(target)},
                       connection_options(config_.db, config_.worker.request_timeout_ms),
                       /*probe=*/true);
      probe.set_deadline(util::deadline_from_now(config_.worker.request_budget()));
      try {
        probe.run([](Connection& session) { return session.query("SELECT 1")->next(); });
        util::log_warning("database " + name + " answers again");
      } catch (const std::exception&) {  // still away: the breaker stays open
      }
    }
    return kEvery;
  });
}

}  // namespace connector::db
