#pragma once
// One background thread per worker process that closes circuit breakers: every half second it
// tries each server whose breaker is open with a fresh connection and `SELECT 1`, within the
// request budget; its first answer closes the breaker, and traffic goes back to that server
// without a restart. A hung server only ever holds this thread, never a request.
#include "config/config.h"
#include "db/connection.h"
#include "util/background_loop.h"

namespace connector::db {

class ServerProber {
 public:
  static constexpr std::chrono::milliseconds kEvery{500};

  ServerProber(const config::Config& config, CircuitBreakers& breakers)
      : config_(config), breakers_(breakers) {}

  void start();
  void stop() { loop_.stop(); }

 private:
  const config::Config& config_;
  CircuitBreakers& breakers_;
  util::BackgroundLoop loop_;
};

}  // namespace connector::db
