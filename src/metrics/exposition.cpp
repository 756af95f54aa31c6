#include "metrics/exposition.h"

#include <rapidjson/writer.h>

#include <algorithm>
#include <string>
#include <string_view>

#include "fastcgi/fcgi_screen.h"
#include "metrics/events_exposition.h"
#include "metrics/prometheus_text.h"
#include "util/clock.h"

namespace connector::metrics {
namespace {

using prometheus_text::header;
using prometheus_text::put;
using prometheus_text::sample;
using prometheus_text::single;

// The slots in use: one per label, never past the board.
std::size_t shown_slots(EndpointLabels labels) { return std::min(labels.size(), kEndpointSlots); }

std::string endpoint_label(EndpointLabels labels, std::size_t endpoint) {
  return "endpoint=\"" + std::string(labels[endpoint]) + "\"";
}

static_assert(static_cast<std::size_t>(fastcgi::FcgiRejection::kDeadline) == kFcgiRejectionReasons,
              "a counter per rejection reason");

std::string_view fcgi_rejection_label(std::size_t index) {
  return fastcgi::rejection_label(static_cast<fastcgi::FcgiRejection>(index + 1));
}

// Every reason, zero included: an alert on a rate needs the series before the first rejection.
void write_fcgi_rejections(const Scoreboard& b, rapidjson::StringBuffer& out) {
  header(out, "connector_fcgi_rejected_total", "counter",
         "FastCGI requests closed before libfcgi read them, by reason.");
  for (std::size_t r = 0; r < kFcgiRejectionReasons; ++r) {
    sample(out, "connector_fcgi_rejected_total",
           "reason=\"" + std::string(fcgi_rejection_label(r)) + "\"",
           b.fcgi_rejected[r].load(std::memory_order_relaxed));
  }
}

// Microseconds as seconds with six decimals, exactly (no floating point).
std::string seconds(std::uint64_t us) {
  std::string fraction = std::to_string(us % 1000000 + 1000000).substr(1);
  return std::to_string(us / 1000000) + "." + fraction;
}

void write_requests(const Scoreboard& b, EndpointLabels labels, rapidjson::StringBuffer& out) {
  header(out, "connector_requests_total", "counter", "Requests answered, by endpoint and status.");
  for (std::size_t e = 0; e < shown_slots(labels); ++e) {
    for (std::size_t s = 0; s < kStatusCodes.size(); ++s) {
      const auto count = b.requests[e][s].load(std::memory_order_relaxed);
      if (count == 0) continue;
      const std::string status = kStatusCodes[s] == 0 ? "other" : std::to_string(kStatusCodes[s]);
      sample(out, "connector_requests_total",
             endpoint_label(labels, e) + ",status=\"" + status + "\"", count);
    }
  }
}

void write_latency(const Scoreboard& b, EndpointLabels labels, rapidjson::StringBuffer& out) {
  constexpr std::string_view name = "connector_request_duration_seconds";
  header(out, name, "histogram", "Time from accept to the last byte written, by endpoint.");
  for (std::size_t e = 0; e < shown_slots(labels); ++e) {
    std::uint64_t cumulative = 0;
    for (std::size_t i = 0; i <= kLatencyBucketsUs.size(); ++i) {
      cumulative += b.latency[e][i].load(std::memory_order_relaxed);
      const std::string le = i < kLatencyBucketsUs.size() ? seconds(kLatencyBucketsUs[i]) : "+Inf";
      sample(out, std::string(name) + "_bucket", endpoint_label(labels, e) + ",le=\"" + le + "\"",
             cumulative);
    }
    put(out, std::string(name) + "_sum{" + endpoint_label(labels, e) + "} " +
                 seconds(b.latency_sum_us[e].load(std::memory_order_relaxed)) + "\n");
    sample(out, std::string(name) + "_count", endpoint_label(labels, e), cumulative);
  }
}

// A label value as the text format wants it: backslash, quote and newline escaped.
std::string label_value(std::string_view text) {
  std::string escaped;
  for (char c : text) {
    if (c == '\\' || c == '"') escaped += '\\';
    escaped += c == '\n' ? std::string("\\n") : std::string(1, c);
  }
  return escaped;
}

// A figure older than this is not exposed: a stopped prober's last reading is not current.
constexpr std::int64_t kFreshFigureMs = 5000;

void write_db_server_metrics(const pool::SharedState& state, DbServers servers,
                             std::int64_t now_unix_ms, rapidjson::StringBuffer& out) {
  if (servers.empty()) return;
  const auto fresh = [&](const pool::ServerSlot* slot) {
    return slot != nullptr && slot->lag_ms.load() >= 0 &&
           now_unix_ms - slot->measured_unix_ms.load() <= kFreshFigureMs;
  };
  header(out, "connector_db_server_in_rotation", "gauge",
         "1 while reads may use the server; a replica is out while it lags db_replica_max_lag_s.");
  for (const auto& server : servers) {
    const auto* slot = state.find_server(pool::server_key(server));
    const bool in = slot == nullptr || slot->in_rotation.load() != 0;
    sample(out, "connector_db_server_in_rotation", "server=\"" + label_value(server) + "\"",
           in ? 1 : 0);
  }
  const auto replicas = servers.first(servers.size() - 1);
  if (!replicas.empty()) {
    header(out, "connector_db_replica_lag_seconds", "gauge",
           "How far a replica's applied data is behind the primary (replication heartbeat).");
  }
  for (const auto& server : replicas) {
    const auto* slot = state.find_server(pool::server_key(server));
    if (!fresh(slot)) continue;
    put(out, "connector_db_replica_lag_seconds{server=\"" + label_value(server) + "\"} " +
                 util::seconds_text(slot->lag_ms.load()) + "\n");
  }
  const auto* primary = state.find_server(pool::server_key(servers.back()));
  // Only where replicas are measured (a lag monitor holds the lease, or has read the primary).
  if (primary != nullptr &&
      (primary->measured_unix_ms.load() > 0 || state.lag_monitor.pid.load() != 0)) {
    header(out, "connector_db_primary_reachable", "gauge",
           "1 while the lag monitor reads the primary; 0 when it last did over 5 s ago.");
    sample(out, "connector_db_primary_reachable", {},
           now_unix_ms - primary->measured_unix_ms.load() <= kFreshFigureMs ? 1 : 0);
  }
  if (fresh(primary)) {
    header(out, "connector_db_primary_heartbeat_age_seconds", "gauge",
           "Age of the primary's own replication heartbeat (its event scheduler is running "
           "while this stays near 1).");
    put(out, "connector_db_primary_heartbeat_age_seconds " +
                 util::seconds_text(primary->lag_ms.load()) + "\n");
  }
}

}  // namespace

namespace {

// Milliseconds as seconds (a JSON number), or null for none (-1).
void seconds_or_null(rapidjson::Writer<rapidjson::StringBuffer>& w, std::int64_t ms) {
  if (ms < 0) {
    w.Null();
    return;
  }
  const std::string text = util::seconds_text(ms);
  w.RawValue(text.data(), text.size(), rapidjson::kNumberType);
}

}  // namespace

void write_db_servers(const pool::SharedState& state, DbServers servers, std::int64_t now_unix_ms,
                      rapidjson::Writer<rapidjson::StringBuffer>& w) {
  w.StartArray();
  for (std::size_t i = 0; i < servers.size(); ++i) {
    const bool primary = i + 1 == servers.size();
    const auto* slot = state.find_server(pool::server_key(servers[i]));
    const std::int64_t measured = slot != nullptr ? slot->measured_unix_ms.load() : 0;
    // Read at least once, and not since the bound /metrics shows figures for.
    const std::int64_t reading_age =
        measured > 0 ? std::max<std::int64_t>(0, now_unix_ms - measured) : -1;
    const bool stale = reading_age > kFreshFigureMs;
    w.StartObject();
    w.Key("server");
    w.String(servers[i].data(), static_cast<rapidjson::SizeType>(servers[i].size()));
    w.Key("role");
    w.String(primary ? "primary" : "replica");
    w.Key("in_rotation");
    // What reads are routed by (the last reading's verdict), stale or not: `stale` says how
    // far to trust it.
    w.Bool(slot == nullptr || slot->in_rotation.load() != 0);
    w.Key(primary ? "heartbeat_age_seconds" : "lag_seconds");
    seconds_or_null(w, slot != nullptr ? slot->lag_ms.load() : -1);
    w.Key("measured_unix_ms");
    w.Int64(measured);
    w.Key("reading_age_seconds");
    seconds_or_null(w, reading_age);
    w.Key("stale");
    w.Bool(stale);
    w.EndObject();
  }
  w.EndArray();
}

void write_prometheus(const Scoreboard& b, const pool::SharedState& state, EndpointLabels labels,
                      DbServers servers, std::int64_t now_unix_ms, rapidjson::StringBuffer& out) {
  constexpr auto relaxed = std::memory_order_relaxed;
  write_requests(b, labels, out);
  write_latency(b, labels, out);
  single(out, "connector_slow_requests_total", "counter", "Requests slower than slow_request_ms.",
         b.slow_requests.load(relaxed));
  single(out, "connector_db_errors_total", "counter", "Failed database statements and connects.",
         b.db_errors.load(relaxed));
  single(out, "connector_db_reconnects_total", "counter",
         "Database connections made again after a first one.", b.db_reconnects.load(relaxed));
  // Its HELP text keeps "snapshot", the refreshed copy's name when the series was made.
  single(out, "connector_reference_reloads_total", "counter",
         "Reloads of the in-memory reference data snapshot.", b.reference_reloads.load(relaxed));
  single(out, "connector_deposit_accounts_created_total", "counter",
         "Deposit addresses recorded as new rows.", b.deposit_accounts_created.load(relaxed));
  single(out, "connector_deposit_accounts_refused_total", "counter",
         "Requests for a new deposit address refused by new_accounts_per_minute.",
         b.deposit_accounts_refused.load(relaxed));
  single(out, "connector_pool_threads_busy", "gauge", "Threads handling a request now.",
         b.active_threads());
  single(out, "connector_pool_threads_idle", "gauge", "Threads waiting for a request.",
         b.total_threads() - std::min(b.total_threads(), b.active_threads()));
  single(out, "connector_fcgi_pending_requests", "gauge",
         "Connections whose request is not whole yet, waiting without a thread.",
         b.pending_requests());
  single(out, "connector_pool_threads_max_busy", "gauge", "Most threads ever busy at once.",
         b.max_active.load(relaxed));
  single(out, "connector_pool_processes", "gauge", "Live worker processes.", b.live_processes());
  single(out, "connector_process_starts_total", "counter", "Worker processes started.",
         b.process_starts.load(relaxed));
  single(out, "connector_process_recycles_total", "counter",
         "Worker processes replaced after max_requests.", b.process_recycles.load(relaxed));
  single(out, "connector_process_crashes_total", "counter",
         "Worker processes that died unexpectedly.", b.process_crashes.load(relaxed));
  single(out, "connector_worker_processes_killed_total", "counter",
         "Retiring worker processes killed after shutdown_timeout_s.",
         b.processes_killed.load(relaxed));
  single(out, "connector_config_reloads_total", "counter", "Successful SIGHUP reloads.",
         b.config_reloads.load(relaxed));
  write_fcgi_rejections(b, out);
  single(out, "connector_db_breakers_open", "gauge",
         "Database servers skipped because they stopped answering, summed over the processes.",
         b.breakers_open());
  write_db_server_metrics(state, servers, now_unix_ms, out);
  single(out, "connector_start_time_seconds", "gauge", "Start time of the master, unix seconds.",
         static_cast<std::uint64_t>(b.start_time_unix.load(relaxed)));
  write_events_metrics(state.events, b.events, out);
}

namespace {

void write_refreshed_load(const RefreshedLoad& load,
                          rapidjson::Writer<rapidjson::StringBuffer>& w) {
  w.StartObject();
  w.Key("as_of_unix_ms");
  w.Int64(load.as_of_unix_ms.load());
  w.Key("loaded_unix_ms");
  w.Int64(load.loaded_unix_ms.load());
  w.Key("loaded_monotonic_ns");
  w.Int64(load.loaded_monotonic_ns.load());
  w.EndObject();
}

// One live process (pid: read once by the caller, as the master may clear the slot meanwhile):
// its threads, whether it drains by itself (its pool slot, `control`) and what it serves from
// memory (0: not loaded yet).
void write_process(std::int32_t pid, const ProcessSlot& slot, const pool::ProcessControl& control,
                   rapidjson::Writer<rapidjson::StringBuffer>& w) {
  constexpr auto relaxed = std::memory_order_relaxed;
  w.StartObject();
  w.Key("pid");
  w.Int(pid);
  w.Key("threads");
  w.Uint(slot.threads.load(relaxed));
  w.Key("active_threads");
  w.Uint(slot.active.load(relaxed));
  w.Key("requests");
  w.Uint64(slot.requests.load(relaxed));
  w.Key("retiring");
  w.Bool(control.retiring.load(relaxed) != 0);
  w.Key("pending_requests");
  w.Uint(slot.pending_requests.load(relaxed));
  // The members keep the name the refreshed copies had before "snapshot" meant only the
  // database's consistent read: they are /status's contract (docs/operations.md).
  w.Key("reference_snapshot");
  write_refreshed_load(slot.refreshed_loads.reference, w);
  w.Key("supply_snapshot");
  write_refreshed_load(slot.refreshed_loads.supply, w);
  w.EndObject();
}

}  // namespace

namespace {

void count_member(rapidjson::Writer<rapidjson::StringBuffer>& w, const char* key,
                  std::uint64_t value) {
  w.Key(key);
  w.Uint64(value);
}

// The pool's processes and threads as they are now.
void write_pool_now(const Scoreboard& b, rapidjson::Writer<rapidjson::StringBuffer>& w) {
  constexpr auto relaxed = std::memory_order_relaxed;
  const std::uint32_t total = b.total_threads();
  const std::uint32_t active = std::min(total, b.active_threads());
  count_member(w, "processes", b.live_processes());
  count_member(w, "configured_processes", b.configured_processes.load(relaxed));
  count_member(w, "threads_per_process", b.configured_threads.load(relaxed));
  count_member(w, "active_threads", active);
  count_member(w, "idle_threads", total - active);
  count_member(w, "total_threads", total);
  count_member(w, "max_active_threads", b.max_active.load(relaxed));
  count_member(w, "pending_requests", b.pending_requests());
}

// What the pool counted since it started.
void write_pool_counts(const Scoreboard& b, rapidjson::Writer<rapidjson::StringBuffer>& w) {
  constexpr auto relaxed = std::memory_order_relaxed;
  std::uint64_t not_modified = 0;
  for (std::size_t e = 0; e < kEndpointSlots; ++e) {
    not_modified += b.requests[e][1].load(relaxed);  // kStatusCodes[1] is 304
  }
  count_member(w, "slow_requests", b.slow_requests.load(relaxed));
  count_member(w, "not_modified", not_modified);
  count_member(w, "max_requests", b.max_requests.load(relaxed));
  count_member(w, "process_recycles", b.process_recycles.load(relaxed));
  count_member(w, "process_crashes", b.process_crashes.load(relaxed));
  count_member(w, "config_reloads", b.config_reloads.load(relaxed));
  count_member(w, "processes_killed", b.processes_killed.load(relaxed));
  w.Key("fcgi_rejected");
  w.StartObject();
  for (std::size_t r = 0; r < kFcgiRejectionReasons; ++r) {
    const std::string_view label = fcgi_rejection_label(r);
    w.Key(label.data(), static_cast<rapidjson::SizeType>(label.size()));
    w.Uint64(b.fcgi_rejected[r].load(relaxed));
  }
  w.EndObject();
}

}  // namespace

void write_status(const Scoreboard& b, const pool::SharedState& state, DbServers servers,
                  std::int64_t now_unix_ms, rapidjson::StringBuffer& out) {
  const std::int64_t now_unix = now_unix_ms / 1000;
  constexpr auto relaxed = std::memory_order_relaxed;
  rapidjson::Writer<rapidjson::StringBuffer> w(out);
  const std::int64_t start = b.start_time_unix.load(relaxed);
  w.StartObject();
  w.Key("pool");
  w.String("connector");
  w.Key("process_manager");
  w.String("static");
  w.Key("start_time");
  w.Int64(start);
  w.Key("start_since");
  w.Int64(now_unix - start);
  count_member(w, "accepted_conn", b.accepted.load(relaxed));
  write_pool_now(b, w);
  write_pool_counts(b, w);
  w.Key("db_servers");
  write_db_servers(state, servers, now_unix_ms, w);
  w.Key("events");
  write_events_status(state.events, b.events, w);
  w.Key("process_list");
  w.StartArray();
  for (std::size_t i = 0; i < b.processes.size(); ++i) {
    const std::int32_t pid = b.processes[i].pid.load(relaxed);
    if (pid != 0) write_process(pid, b.processes[i], state.processes[i], w);
  }
  w.EndArray();
  w.EndObject();
}

}  // namespace connector::metrics
