# shellcheck shell=bash
# The connector-worker a script started, found and stopped by its pid file. Sourced by
# scripts/demo and scripts/fleet-node.

# connector_worker_pid PID_FILE MATCH: prints the pid PID_FILE holds if that process's command line
# contains MATCH (a connector-worker this script started, never another program that reused
# the pid); prints nothing otherwise.
connector_worker_pid() {
  local pid
  pid=$(cat "$1" 2>/dev/null || true)
  [[ -n $pid ]] && tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline" | grep -qF -- "$2" && echo "$pid"
  return 0
}

# stop_connector_worker PID_FILE MATCH WAIT_S: SIGTERM to that worker, up to WAIT_S seconds for it to
# finish its requests and exit, then SIGKILL; removes PID_FILE.
stop_connector_worker() {
  local pid
  pid=$(connector_worker_pid "$1" "$2")
  if [[ -n $pid ]] && kill -TERM "$pid" 2>/dev/null; then
    for _ in $(seq $(($3 * 10))); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$1"
}
