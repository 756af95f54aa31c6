#pragma once
// One worker process (a child of the master): its thread pool, until SIGTERM (drain) or until it
// has served max_requests (recycle).
#include "config/config.h"
#include "metrics/scoreboard.h"
#include "pool/process_control.h"

namespace connector::fcgi {

// Exit status of a process that stops because it served max_requests: the master replaces it.
inline constexpr int kRecycleExitStatus = 75;

// Runs in the child right after fork(); returns its exit status. `slot` and `control` are the
// process's slots of the scoreboard and of the pool's shared state.
int run_worker_process(int listen_fd, const config::Config& config, metrics::ProcessSlot& slot,
                       pool::ProcessControl& control);

}  // namespace connector::fcgi
