#pragma once
// Which server a connection uses, of its ordered list (read replicas, then the primary; or the
// primary alone): pure policy over server indexes, each server's circuit breaker
// (db/circuit_breaker.h) and an injected clock, so every transition is unit-tested without a
// server. The connection (db/connection.h) asks it before each statement whether to keep its
// server (keep_current), and for a new connection tries the servers in order (consider), telling
// it what happened (connected, connect_failed, answered, hung).
//
// * A server whose breaker is open (it stopped answering) or that is out of rotation (a replica
//   too far behind) is passed over, even by a live connection to it; a probe connection (the
//   prober's and the lag monitor's) ignores both.
// * A server whose connect failed is not tried again for kReconnectPause.
// * On a fallback server, a connection goes back to an earlier one once failback_after has
//   passed since it connected (a server that failed may answer again), or at once when an
//   earlier server that has not failed for failback_after is usable again (a replica back in
//   rotation).
#include <chrono>
#include <cstddef>
#include <functional>
#include <vector>

#include "db/circuit_breaker.h"
#include "db/rotation.h"

namespace connector::db {

class ServerSelector {
 public:
  using Clock = std::chrono::steady_clock;
  using Now = std::function<Clock::time_point()>;

  // After a failed connect, a server is skipped for this long instead of hammering it.
  static constexpr auto kReconnectPause = std::chrono::milliseconds(200);

  enum class Verdict {
    kTry,            // connect to it now
    kBreakerOpen,    // it did not answer lately; waiting for a probe
    kOutOfRotation,  // replication lag
    kPausing,        // its connect failed less than kReconnectPause ago
  };

  // What passes a server over: its breaker and its rotation (nullptr: none, never skipped).
  struct Checks {
    CircuitBreaker* breaker = nullptr;
    const Rotation* rotation = nullptr;
  };

  // servers: one per server, in order of preference.
  ServerSelector(const std::vector<Checks>& servers, std::chrono::seconds failback_after,
                 bool probe, Now now = &Clock::now);

  std::size_t size() const { return servers_.size(); }
  // The server of the connection now (or last made; 0 before any).
  std::size_t current() const { return current_; }

  // Whether a live connection to the current server is still used: not passed over, and no
  // failback due.
  bool keep_current() const;

  // Whether a new connection tries this server now. kTry notes the time as the attempt's start.
  Verdict consider(std::size_t server);
  // The attempt consider() allowed succeeded: the server is current from the attempt's start,
  // and its breaker counts an answer (it completed a handshake).
  void connected(std::size_t server);
  // It failed: paused from now; when the server did not answer at all, its breaker counts it.
  void connect_failed(std::size_t server, bool no_answer);

  // The current server answered (a statement ran, or failed with its own error).
  void answered();
  // A statement on the current server waited out the read timeout: the server is hung. It
  // counts against its breaker and is paused, so a retry passes it over.
  void hung();

 private:
  struct Server {
    Checks checks;
    Clock::time_point last_failure{};
  };

  bool skipped(std::size_t server) const;
  bool breaker_open(std::size_t server) const;
  bool failback_due() const;

  std::vector<Server> servers_;
  std::chrono::seconds failback_after_;
  bool probe_;
  Now now_;
  std::size_t current_ = 0;
  Clock::time_point attempt_started_{};
  Clock::time_point connected_at_{};
};

}  // namespace connector::db
