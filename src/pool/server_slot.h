#pragma once
// A database server's shared slot: its rotation, the lag monitor's last reading of it, and for
// the primary what the monitor reads back (its clock, its server_id). Lock-free atomics only:
// the slots live in the pool's shared mapping (pool/shared_state.h).
#include <atomic>
#include <cstdint>
#include <string_view>

namespace connector::pool {

// Database servers with a slot in the shared state: the replicas (config::kMaxReplicas) and
// the primary.
inline constexpr std::size_t kMaxServerSlots = 16;

// One database server a worker reads (db_replicas, then the primary), found by the key of its
// address (server_key). The master assigns the slots (SharedState::assign_servers); one process
// of the pool at a time measures the servers (db/replica_monitor.h, SharedState::lag_monitor)
// and writes their figures here, and every process takes its replicas' rotation from here.
struct ServerSlot {
  std::atomic<std::uint64_t> key{0};  // server_key(address); 0: a free slot
  // Whether reads may use the server, read by every process at each request
  // (db::Rotation::in). The master sets a replica out until it is first measured.
  std::atomic<std::uint32_t> in_rotation{1};
  // A replica's lag; the primary's own heartbeat's age (its event is running while this stays
  // under a second or two). -1: not known.
  std::atomic<std::int64_t> lag_ms{-1};
  std::atomic<std::int64_t> measured_unix_ms{0};  // when lag_ms was measured; 0: never
  // The primary's only: its clock (unix microseconds) when last read, the newest time it is
  // known to have written; 0: never read.
  std::atomic<std::int64_t> clock_us{0};
  // The primary's only: its @@server_id when last read, whose heartbeat row the replicas' lag is
  // read from; -1: never read.
  std::atomic<std::int64_t> server_id{-1};

  void clear_figures() {
    in_rotation.store(1);
    lag_ms.store(-1);
    measured_unix_ms.store(0);
    clock_us.store(0);
    server_id.store(-1);
  }
};

// The slot key of a server's address (endpoint.describe()): never 0.
std::uint64_t server_key(std::string_view address);

}  // namespace connector::pool
