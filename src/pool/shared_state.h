#pragma once
// What the worker's processes coordinate by, apart from what they count (metrics/scoreboard.h):
// the leases of the tasks one process does for the pool, each database server's rotation and
// readings, the event publisher's cursor and initial-state queue, and what the master reads of
// each worker process (retiring, its heartbeat). A plain struct of lock-free
// (address-free) atomics in one anonymous shared mapping made by the master before it forks,
// so every process sees the same state; nothing here allocates.
#include <array>
#include <atomic>
#include <cstdint>
#include <span>

#include "pool/events_board.h"
#include "pool/lease.h"
#include "pool/process_control.h"
#include "pool/server_slot.h"

namespace connector::pool {

struct SharedState {
  std::array<ServerSlot, kMaxServerSlots> servers{};
  // The process that measures the servers for the pool (db/replica_monitor.h).
  Lease lag_monitor;
  EventsBoard events;
  // One per worker process, the slot of the scoreboard's of the same index (the master's
  // Child::slot).
  std::array<ProcessControl, kMaxProcessSlots> processes{};

  // The slot of a server, if it has one.
  ServerSlot* find_server(std::uint64_t key);
  const ServerSlot* find_server(std::uint64_t key) const;
  // The master, at start and at each reload: a slot for each of `keys` (kept with its figures
  // if it had one), the others freed. Only the master calls it, so slots never race.
  void assign_servers(std::span<const std::uint64_t> keys);
  // The same for the servers a worker reads, the replicas then the primary (last), each slot's
  // figures made those of its role now. With lag_checked, a replica not measured as a replica
  // yet (new, or the primary until this reload) is out of rotation until the lag monitor has
  // found it current, and the primary is in whatever it was before (a promoted replica);
  // without, no figures of an earlier configuration are left to show.
  void assign_read_servers(std::span<const std::uint64_t> keys, bool lag_checked);
};

static_assert(std::atomic<std::uint64_t>::is_always_lock_free &&
                  std::atomic<std::int64_t>::is_always_lock_free,
              "shared state needs address-free atomics");

// The process's shared state: the pool's in the worker, a private one elsewhere (tools, tests).
SharedState& shared_state();

// Maps a fresh shared state and makes it this process's (and its future children's).
SharedState& create_shared_state();

}  // namespace connector::pool
