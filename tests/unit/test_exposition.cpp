// /metrics and /status, byte for byte (metrics::write_prometheus, metrics::write_status), on a
// scoreboard and a pool state with every figure and every piece of state set to a value of its
// own: a field moved between the two (metrics/scoreboard.h, pool/shared_state.h) or rendered
// from elsewhere must leave both documents as they are (tests/fixtures/exposition-metrics.txt,
// tests/fixtures/exposition-status.json). On a mismatch the test writes what it got beside
// itself (exposition-*.actual): copy it over the fixture when the change is meant.
#define BOOST_TEST_MODULE exposition
#include <rapidjson/stringbuffer.h>

#include <boost/test/unit_test.hpp>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "metrics/exposition.h"
#include "metrics/scoreboard.h"
#include "pool/shared_state.h"

using namespace connector;

namespace {

constexpr std::int64_t kNow = 1'800'000'000'000;  // unix ms
const std::vector<std::string> kServers = {"10.0.0.21:3306", "unix:/run/replica.sock",
                                           "10.0.0.5:3306"};
// Labels of the test's own: the fixtures do not change when an endpoint is added.
constexpr std::string_view kLabels[] = {"/v1/a", "/v1/b", "ops", "unknown"};

void fill_counters(metrics::Scoreboard& b) {
  b.start_time_unix.store(1'799'990'000);
  b.accepted.store(101);
  b.max_active.store(7);
  b.db_errors.store(3);
  b.db_reconnects.store(4);
  b.reference_reloads.store(5);
  b.process_starts.store(6);
  b.process_recycles.store(8);
  b.process_crashes.store(9);
  b.config_reloads.store(10);
  b.deposit_accounts_created.store(11);
  b.deposit_accounts_refused.store(12);
  for (std::size_t r = 0; r < metrics::kFcgiRejectionReasons; ++r) b.fcgi_rejected[r].store(20 + r);
  b.processes_killed.store(13);
  b.configured_processes.store(2);
  b.configured_threads.store(4);
  b.max_requests.store(5000);
  // Every status and several buckets; a slot past the labels is not shown.
  b.record(0, 200, 400, false);
  b.record(0, 200, 2'000, false);
  b.record(0, 304, 30'000, false);
  b.record(1, 400, 700'000, true);
  b.record(1, 503, 3'000'000, true);
  b.record(1, 999, 1'000, false);
  b.record(2, 200, 100, false);
  b.record(3, 404, 50, false);
  b.record(metrics::kEndpointSlots - 1, 200, 10, false);
  auto& e = b.events;
  e.changes_published.store(31);
  e.initial_states_published.store(32);
  e.publish_failures.store(33);
  e.changes_passed_over.store(34);
  e.changes_unpublishable.store(35);
  e.publishes_refused.store(36);
  e.last_round_unix_ms.store(kNow - 250);
}

// Three live processes in slots 0, 1 and 3 (slot 2 ended: not shown), one of them retiring:
// each process's figures (the scoreboard's slot) and control state (the pool's slot of the
// same index, pool::ProcessControl).
void fill_processes(metrics::Scoreboard& b, pool::SharedState& state) {
  const std::size_t live[] = {0, 1, 3};
  for (std::size_t n = 0; n < std::size(live); ++n) {
    auto& slot = b.processes[live[n]];
    const auto i = static_cast<std::uint32_t>(n);
    slot.pid.store(static_cast<std::int32_t>(4100 + i));
    slot.threads.store(4);
    slot.active.store(i);
    slot.requests.store(1000 * (i + 1));
    slot.pending_requests.store(2 * i);
    slot.breakers_open.store(i);
    state.processes[live[n]].heartbeat_ms.store(90'000 + i);  // not shown
    slot.refreshed_loads.reference.as_of_unix_ms.store(kNow - 2000 - i);
    slot.refreshed_loads.reference.loaded_unix_ms.store(kNow - 1900 - i);
    slot.refreshed_loads.reference.loaded_monotonic_ns.store(5'000'000'000 + i);
    slot.refreshed_loads.supply.as_of_unix_ms.store(kNow - 900 - i);
    slot.refreshed_loads.supply.loaded_unix_ms.store(kNow - 800 - i);
    slot.refreshed_loads.supply.loaded_monotonic_ns.store(6'000'000'000 + i);
  }
  state.processes[1].retiring.store(1);
  // An ended process's slots: pid 0, left out of every sum, and its state not taken for the
  // next live process's.
  b.processes[2].threads.store(4);
  b.processes[2].active.store(3);
  state.processes[2].retiring.store(1);
}

void fill_state(pool::SharedState& state) {
  std::vector<std::uint64_t> keys;
  for (const auto& server : kServers) keys.push_back(pool::server_key(server));
  state.assign_servers(keys);
  const auto measure = [&](std::size_t i, bool in, std::int64_t lag_ms, std::int64_t at) {
    auto* slot = state.find_server(keys[i]);
    BOOST_REQUIRE(slot != nullptr);
    slot->in_rotation.store(in ? 1 : 0);
    slot->lag_ms.store(lag_ms);
    slot->measured_unix_ms.store(at);
  };
  measure(0, false, 12'345, kNow - 1000);
  measure(1, true, 7, kNow - 6000);  // stale
  measure(2, true, 1'002, kNow - 300);
  state.lag_monitor.pid.store(4101);
  auto& events = state.events;
  events.publisher.pid.store(4100);
  events.cursor_known.store(true);
  events.cursor.store(77);
  events.settled_cursor.store(70);
  events.initial_state_requests_dropped.store(3);
  events.events_nginx_answers.store(false);
}

struct Filled {
  Filled() {
    fill_counters(*board);
    fill_processes(*board, *state);
    fill_state(*state);
  }
  std::unique_ptr<metrics::Scoreboard> board = std::make_unique<metrics::Scoreboard>();
  std::unique_ptr<pool::SharedState> state = std::make_unique<pool::SharedState>();
};

std::string fixture(std::string_view name) {
  std::ifstream file(std::string(CONNECTOR_SOURCE_DIR) + "/tests/fixtures/" + std::string(name));
  BOOST_REQUIRE(file);
  return {std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
}

// The document as the fixture holds it, else written out beside the test for a look.
void check_against(std::string_view name, const std::string& got) {
  const bool same = got == fixture(name);
  if (!same) std::ofstream(std::string(name) + ".actual") << got;
  BOOST_TEST(same, name << " differs: see " << name << ".actual");
}

}  // namespace

BOOST_FIXTURE_TEST_CASE(metrics_are_as_they_were, Filled) {
  rapidjson::StringBuffer out;
  metrics::write_prometheus(*board, *state, kLabels, kServers, kNow, out);
  check_against("exposition-metrics.txt", std::string(out.GetString(), out.GetSize()));
}

// The fixture ends with a newline, the document does not.
BOOST_FIXTURE_TEST_CASE(status_is_as_it_was, Filled) {
  rapidjson::StringBuffer out;
  metrics::write_status(*board, *state, kServers, kNow, out);
  check_against("exposition-status.json", std::string(out.GetString(), out.GetSize()) + "\n");
}
