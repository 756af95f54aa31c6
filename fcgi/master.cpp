#include "master.h"

#include <signal.h>
#include <sys/wait.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "db/connection.h"
#include "util/log.h"
#include "worker_process.h"

namespace connector::fcgi {
namespace {

// A process that dies sooner than this after its start counts as crash-looping: the next start
// waits this long, so a broken database password cannot fork-bomb the machine.
constexpr auto kMinLifetime = std::chrono::seconds(1);

sigset_t master_signals() {
  sigset_t set;
  sigemptyset(&set);
  for (int s : {SIGCHLD, SIGTERM, SIGINT, SIGHUP}) sigaddset(&set, s);
  return set;
}

timespec to_timespec(std::chrono::microseconds d) {
  return {static_cast<time_t>(d.count() / 1000000), static_cast<long>(d.count() % 1000000) * 1000};
}

std::int64_t monotonic_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// How long a serving process may show no heartbeat: its threads beat at least once a second
// when idle and once per request, and a request's every step is bounded (reading it and
// writing the answer by fcgi_read_timeout_ms each, its database work by request_timeout_ms).
std::chrono::milliseconds heartbeat_limit(const config::WorkerSettings& w) {
  return std::chrono::milliseconds(std::uint64_t{2} * w.fcgi_read_timeout_ms +
                                   w.request_timeout_ms + 3000);
}

std::string describe_exit(int status) {
  if (WIFEXITED(status)) return "exited with " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return std::string("killed by ") + strsignal(WTERMSIG(status));
  return "stopped";
}

}  // namespace

Master::Master(std::string config_path, config::Config config, int listen_fd,
               metrics::Scoreboard& board, pool::SharedState& state)
    : config_path_(std::move(config_path)),
      config_(std::move(config)),
      listen_fd_(listen_fd),
      board_(board),
      state_(state) {}

void Master::publish_config() {
  board_.configured_processes.store(config_.worker.processes);
  board_.configured_threads.store(config_.worker.threads);
  board_.max_requests.store(config_.worker.max_requests);
  // A shared slot for each server read (pool::ServerSlot); with the lag check off, no
  // figures of an earlier configuration are left to show.
  std::vector<std::uint64_t> servers;
  for (const auto& address : db::read_server_addresses(config_.db)) {
    servers.push_back(pool::server_key(address));
  }
  // The measuring passes to a process of this configuration (pool::SharedState's leases).
  state_.lag_monitor.next_generation();
  state_.events.publisher.next_generation();
  state_.assign_read_servers(servers, config_.db.replica_max_lag_s != 0);
}

std::size_t Master::free_slot() const {
  for (std::size_t i = 0; i < board_.processes.size(); ++i) {
    const bool taken = std::any_of(children_.begin(), children_.end(),
                                   [i](const Child& c) { return c.slot == i; });
    if (!taken) return i;
  }
  return board_.processes.size();
}

unsigned Master::current_children() const {
  // A process retiring after max_requests is replaced at once (it drains meanwhile), but only
  // while the children stay within twice `processes`, the two generations of a reload the
  // slot table is sized for; past that its replacement waits for it to exit.
  const bool replace_retiring = children_.size() < 2 * std::size_t{config_.worker.processes};
  return static_cast<unsigned>(
      std::count_if(children_.begin(), children_.end(), [&](const Child& c) {
        const bool retiring = state_.processes[c.slot].retiring.load() != 0;
        return c.generation == generation_ && !(replace_retiring && retiring);
      }));
}

bool Master::spawn() {
  const std::size_t slot = free_slot();
  if (slot == board_.processes.size()) {
    util::log_error("no free process slot; not starting a worker process");
    return false;
  }
  auto& process_slot = board_.processes[slot];
  process_slot.active.store(0);
  process_slot.threads.store(0);
  process_slot.pending_requests.store(0);
  process_slot.breakers_open.store(0);
  process_slot.requests.store(0);
  process_slot.refreshed_loads.clear();
  auto& control = state_.processes[slot];
  control.retiring.store(0);
  control.heartbeat_ms.store(monotonic_ms());  // counts from the start
  const pid_t pid = ::fork();
  if (pid < 0) {
    util::log_error("fork failed");
    return false;
  }
  if (pid == 0) std::exit(run_worker_process(listen_fd_, config_, process_slot, control));
  process_slot.pid.store(pid);
  board_.process_starts.fetch_add(1);
  children_.push_back({pid, generation_, slot, Clock::now(), std::nullopt, false});
  return true;
}

void Master::spawn_missing() {
  while (current_children() < config_.worker.processes && Clock::now() >= next_spawn_) {
    if (!spawn()) {
      next_spawn_ = Clock::now() + kMinLifetime;  // try again later, never spin
      return;
    }
  }
}

void Master::reap() {
  int status = 0;
  pid_t pid;
  while ((pid = ::waitpid(-1, &status, WNOHANG)) > 0) {
    const auto it = std::find_if(children_.begin(), children_.end(),
                                 [pid](const Child& c) { return c.pid == pid; });
    if (it == children_.end()) continue;
    auto& slot = board_.processes[it->slot];
    slot.pid.store(0);
    // A process that measured the servers or published events for the pool hands the task on
    // at once.
    state_.lag_monitor.release(pid);
    state_.events.publisher.release(pid);
    slot.active.store(0);
    slot.threads.store(0);
    const bool recycled = WIFEXITED(status) && WEXITSTATUS(status) == kRecycleExitStatus;
    const bool clean = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    const bool retired = stopping_ || it->generation != generation_;
    if (it->killed) {
      // Counted and logged by kill_overdue().
    } else if (recycled) {
      board_.process_recycles.fetch_add(1);
      util::log_info("worker process " + std::to_string(pid) + " served max_requests; replacing");
    } else if (!clean || !retired) {
      board_.process_crashes.fetch_add(1);
      util::log_error("worker process " + std::to_string(pid) + " " + describe_exit(status));
      if (Clock::now() - it->started < kMinLifetime) next_spawn_ = Clock::now() + kMinLifetime;
    }
    children_.erase(it);
  }
}

bool Master::retiring(const Child& child) const {
  return child.generation != generation_ || state_.processes[child.slot].retiring.load() != 0;
}

void Master::kill_overdue() {
  const auto now = Clock::now();
  const auto limit = std::chrono::seconds(config_.worker.shutdown_timeout_s);
  for (auto& child : children_) {
    if (child.killed || !retiring(child)) continue;
    if (!child.retiring_since) child.retiring_since = now;
    if (now - *child.retiring_since < limit) continue;
    ::kill(child.pid, SIGKILL);
    child.killed = true;
    board_.processes_killed.fetch_add(1);
    util::log_error("worker process " + std::to_string(child.pid) + " did not end within " +
                    std::to_string(limit.count()) +
                    " s of retiring (shutdown_timeout_s); killed it");
  }
}

bool Master::pool_progressing(pid_t& stuck) const {
  const auto limit = heartbeat_limit(config_.worker).count();
  const std::int64_t now = monotonic_ms();
  for (const auto& child : children_) {
    if (retiring(child)) continue;
    if (now - state_.processes[child.slot].heartbeat_ms.load() > limit) {
      stuck = child.pid;
      return false;
    }
  }
  return true;
}

void Master::feed_watchdog() {
  pid_t stuck = 0;
  if (pool_progressing(stuck)) {
    // The line first: whoever sees the ping can read it.
    if (watchdog_withheld_) {
      util::log_info("every worker process beats again; feeding the watchdog");
    }
    watchdog_withheld_ = false;
    sd_notify(0, "WATCHDOG=1");
    return;
  }
  if (!watchdog_withheld_) {
    util::log_error("worker process " + std::to_string(stuck) + " shows no progress for over " +
                    std::to_string(heartbeat_limit(config_.worker).count()) +
                    " ms; not feeding the watchdog (systemd restarts the service if it lasts)");
  }
  watchdog_withheld_ = true;
}

void Master::reload() {
  config::Config fresh;
  try {
    fresh = config::load_config(config_path_);
  } catch (const std::exception& e) {
    util::log_error(std::string("reload refused, keeping the running configuration: ") + e.what());
    sd_notify(0, "READY=1\nSTATUS=reload refused: invalid configuration");
    return;
  }
  sd_notify(0, "RELOADING=1");
  if (fresh.worker.listen != config_.worker.listen) {
    util::log_warning("listen changed: it takes effect at the next restart, not on reload");
  }
  config_ = std::move(fresh);
  publish_config();
  util::log_info("reloading: " + config::describe(config_));
  // The new generation listens before the old one is told to drain: no gap, nothing dropped.
  const unsigned old_generation = generation_++;
  next_spawn_ = {};
  spawn_missing();
  for (const auto& child : children_) {
    if (child.generation == old_generation) ::kill(child.pid, SIGTERM);
  }
  board_.config_reloads.fetch_add(1);
  sd_notify(0, "READY=1\nSTATUS=serving (reloaded)");
}

void Master::stop() {
  stopping_ = true;
  sd_notify(0, "STOPPING=1");
  util::log_info("stopping: draining requests in flight");
  for (const auto& child : children_) ::kill(child.pid, SIGTERM);
  const auto deadline = Clock::now() + std::chrono::seconds(config_.worker.shutdown_timeout_s);
  while (!children_.empty() && Clock::now() < deadline) {
    reap();
    if (!children_.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  for (const auto& child : children_) {
    util::log_error("worker process " + std::to_string(child.pid) +
                    " did not drain in time; killing it");
    ::kill(child.pid, SIGKILL);
  }
  while (!children_.empty()) {
    reap();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

int Master::run() {
  const sigset_t signals = master_signals();
  publish_config();
  spawn_missing();
  sd_notify(0, "READY=1\nSTATUS=serving");
  util::log_info("ready: " + std::to_string(config_.worker.processes) + " processes x " +
                 std::to_string(config_.worker.threads) + " threads");

  std::uint64_t watchdog_us = 0;
  const bool watchdog = sd_watchdog_enabled(0, &watchdog_us) > 0;
  const auto tick = watchdog ? std::chrono::microseconds(watchdog_us / 2)
                             : std::chrono::microseconds(std::chrono::seconds(1));
  auto next_ping = Clock::now();
  for (;;) {
    const timespec timeout =
        to_timespec(std::min(tick, std::chrono::duration_cast<std::chrono::microseconds>(
                                       std::chrono::milliseconds(200))));
    const int signal_number = ::sigtimedwait(&signals, nullptr, &timeout);
    if (signal_number == SIGTERM || signal_number == SIGINT) break;
    if (signal_number == SIGHUP) reload();
    reap();
    kill_overdue();
    spawn_missing();
    if (watchdog && Clock::now() >= next_ping) {
      feed_watchdog();
      next_ping = Clock::now() + tick;
    }
  }
  stop();
  util::log_info("stopped");
  return 0;
}

}  // namespace connector::fcgi
