// The database servers as the operations pages show them (metrics::write_db_servers, the
// server series of write_prometheus): roles, rotation, lag, and addresses escaped.
#define BOOST_TEST_MODULE db_servers
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <boost/test/unit_test.hpp>
#include <memory>
#include <string>
#include <vector>

#include "db/rotation.h"
#include "metrics/exposition.h"
#include "metrics/scoreboard.h"
#include "pool/shared_state.h"

using namespace connector::metrics;
using connector::pool::kMaxServerSlots;
using connector::pool::server_key;
using connector::pool::SharedState;

namespace {

constexpr std::int64_t kNow = 1'800'000'000'000;  // unix ms
const std::vector<std::string> kServers = {"unix:/run/replica \"1\"\\.sock", "10.0.0.21:3306",
                                           "10.0.0.5:3306"};

std::string json(const SharedState& board) {
  rapidjson::StringBuffer out;
  rapidjson::Writer<rapidjson::StringBuffer> w(out);
  write_db_servers(board, kServers, kNow, w);
  return out.GetString();
}

// The lines of the Prometheus text that name a database server or the primary's heartbeat.
std::string server_lines(const SharedState& board) {
  rapidjson::StringBuffer out;
  const std::string_view labels[] = {"a", "b", "c", "d", "e", "f", "g", "h", "i"};
  Scoreboard counts;
  write_prometheus(counts, board, EndpointLabels(labels), kServers, kNow, out);
  std::string text = out.GetString(), lines;
  for (std::size_t start = 0, end; start < text.size(); start = end + 1) {
    end = text.find('\n', start);
    const std::string line = text.substr(start, end - start);
    if (line.rfind("connector_db_server", 0) == 0 || line.rfind("connector_db_replica", 0) == 0 ||
        line.rfind("connector_db_primary", 0) == 0) {
      lines += line + "\n";
    }
  }
  return lines;
}

std::unique_ptr<SharedState> board_with_servers() {
  auto board = std::make_unique<SharedState>();
  std::vector<std::uint64_t> keys;
  for (const auto& server : kServers) keys.push_back(server_key(server));
  board->assign_servers(keys);
  return board;
}

void measure(SharedState& board, const std::string& server, bool in, std::int64_t lag_ms,
             std::int64_t at) {
  auto* slot = board.find_server(server_key(server));
  BOOST_REQUIRE(slot != nullptr);
  slot->in_rotation.store(in ? 1 : 0);
  slot->lag_ms.store(lag_ms);
  slot->measured_unix_ms.store(at);
}

}  // namespace

BOOST_AUTO_TEST_CASE(servers_not_measured_are_in_rotation_with_unknown_lag) {
  auto board = board_with_servers();
  BOOST_TEST(json(*board) ==
             R"([{"server":"unix:/run/replica \"1\"\\.sock","role":"replica","in_rotation":true,)"
             R"("lag_seconds":null,"measured_unix_ms":0,"reading_age_seconds":null,"stale":false},)"
             R"({"server":"10.0.0.21:3306","role":"replica","in_rotation":true,)"
             R"("lag_seconds":null,"measured_unix_ms":0,"reading_age_seconds":null,"stale":false},)"
             R"({"server":"10.0.0.5:3306","role":"primary","in_rotation":true,)"
             R"("heartbeat_age_seconds":null,"measured_unix_ms":0,"reading_age_seconds":null,)"
             R"("stale":false}])");
  BOOST_TEST(server_lines(*board) ==
             "connector_db_server_in_rotation{server=\"unix:/run/replica \\\"1\\\"\\\\.sock\"} 1\n"
             "connector_db_server_in_rotation{server=\"10.0.0.21:3306\"} 1\n"
             "connector_db_server_in_rotation{server=\"10.0.0.5:3306\"} 1\n");
}

BOOST_AUTO_TEST_CASE(measured_servers_show_their_state_and_stale_figures_are_not_exposed) {
  auto board = board_with_servers();
  measure(*board, kServers[0], false, 12'345, kNow - 1000);
  measure(*board, kServers[1], true, 7, kNow - 6000);  // measured 6 s ago: not exposed
  measure(*board, kServers[2], true, 1'002, kNow);
  BOOST_TEST(json(*board) ==
             R"([{"server":"unix:/run/replica \"1\"\\.sock","role":"replica","in_rotation":false,)"
             R"("lag_seconds":12.345,"measured_unix_ms":1799999999000,"reading_age_seconds":1.000,)"
             R"("stale":false},)"
             // In rotation by its last reading, which reads are routed by, but that is 6 s old.
             R"({"server":"10.0.0.21:3306","role":"replica","in_rotation":true,)"
             R"("lag_seconds":0.007,"measured_unix_ms":1799999994000,"reading_age_seconds":6.000,)"
             R"("stale":true},)"
             R"({"server":"10.0.0.5:3306","role":"primary","in_rotation":true,)"
             R"("heartbeat_age_seconds":1.002,"measured_unix_ms":1800000000000,)"
             R"("reading_age_seconds":0.000,"stale":false}])");
  BOOST_TEST(server_lines(*board) ==
             "connector_db_server_in_rotation{server=\"unix:/run/replica \\\"1\\\"\\\\.sock\"} 0\n"
             "connector_db_server_in_rotation{server=\"10.0.0.21:3306\"} 1\n"
             "connector_db_server_in_rotation{server=\"10.0.0.5:3306\"} 1\n"
             "connector_db_replica_lag_seconds{server=\"unix:/run/replica \\\"1\\\"\\\\.sock\"} "
             "12.345\n"
             "connector_db_primary_reachable 1\n"
             "connector_db_primary_heartbeat_age_seconds 1.002\n");
  // The primary not read for 12 s (down): unreachable, its heartbeat's age no longer exposed,
  // and /readyz marks that reading stale (reads still go by it until they fail).
  measure(*board, kServers[2], true, 1'002, kNow - 12'000);
  BOOST_TEST(
      json(*board).ends_with(R"({"server":"10.0.0.5:3306","role":"primary","in_rotation":true,)"
                             R"("heartbeat_age_seconds":1.002,"measured_unix_ms":1799999988000,)"
                             R"("reading_age_seconds":12.000,"stale":true}])"));
  // Exactly the bound: still fresh.
  measure(*board, kServers[2], true, 1'002, kNow - 5000);
  BOOST_TEST(json(*board).ends_with(R"("reading_age_seconds":5.000,"stale":false}])"));
  measure(*board, kServers[2], true, 1'002, kNow - 6000);
  BOOST_TEST(
      server_lines(*board).ends_with("12.345\n"
                                     "connector_db_primary_reachable 0\n"));
}

BOOST_AUTO_TEST_CASE(the_master_assigns_slots_keeps_figures_and_frees_the_rest) {
  auto board = std::make_unique<SharedState>();
  const std::uint64_t first[] = {server_key("a:1"), server_key("b:1")};
  board->assign_servers(first);
  auto* a = board->find_server(server_key("a:1"));
  auto* b = board->find_server(server_key("b:1"));
  BOOST_REQUIRE(a != nullptr);
  BOOST_REQUIRE(b != nullptr);
  BOOST_TEST(a != b);
  a->in_rotation.store(0);
  b->in_rotation.store(0);
  b->lag_ms.store(9000);
  // A reload reading b and c: a's slot is freed, b keeps its figures, c starts clean.
  const std::uint64_t second[] = {server_key("b:1"), server_key("c:1")};
  board->assign_servers(second);
  BOOST_TEST(board->find_server(server_key("a:1")) == nullptr);
  BOOST_TEST(board->find_server(server_key("b:1")) == b);
  BOOST_TEST(b->in_rotation.load() == 0u);
  BOOST_TEST(b->lag_ms.load() == 9000);
  auto* c = board->find_server(server_key("c:1"));
  BOOST_REQUIRE(c != nullptr);
  BOOST_TEST(c->in_rotation.load() == 1u);
  BOOST_TEST(c->lag_ms.load() == -1);
  // More servers than slots: the first kMaxServerSlots get one (db_replicas allows 15 and the
  // primary).
  std::vector<std::uint64_t> many;
  for (std::size_t i = 0; i <= kMaxServerSlots; ++i) many.push_back(server_key(std::to_string(i)));
  board->assign_servers(many);
  BOOST_TEST(board->find_server(many[kMaxServerSlots - 1]) != nullptr);
  BOOST_TEST(board->find_server(many[kMaxServerSlots]) == nullptr);
}

// Every process reads a replica's rotation from the pool's slot at each request: a change the
// lag monitor makes in any process is followed at once, and a slot the master gave to another
// server since (a reload) leaves the replica out.
BOOST_AUTO_TEST_CASE(a_rotation_follows_the_pools_slot_at_each_call) {
  auto board = board_with_servers();
  connector::db::Rotation rotation;
  rotation.set(false);
  BOOST_TEST(!rotation.in());  // no slot: this process's own decision
  rotation.set(true);
  const auto key = server_key(kServers[0]);
  auto* slot = board->find_server(key);
  BOOST_REQUIRE(slot != nullptr);
  rotation.follow(*slot, key);
  measure(*board, kServers[0], false, 9'000, kNow);
  BOOST_TEST(!rotation.in());
  measure(*board, kServers[0], true, 100, kNow);
  BOOST_TEST(rotation.in());
  rotation.set(false);  // the lag monitor's decision goes into the slot, for every process
  BOOST_TEST(slot->in_rotation.load() == 0u);
  BOOST_TEST(!rotation.in());
  rotation.set(true);
  const std::uint64_t others[] = {server_key("other:3306"), server_key(kServers[2])};
  board->assign_servers(others);
  BOOST_TEST(!rotation.in());
  rotation.set(false);  // a slot no longer its own is not written
  BOOST_TEST((slot->key.load() == 0u || slot->in_rotation.load() == 1u));
  BOOST_TEST(board->find_server(others[0])->in_rotation.load() == 1u);
}

// The master at each reload (Master::publish_config): a replica is in rotation only once
// measured as a replica, and the primary always is. A promotion swaps the roles: the promoted
// replica, out while it lagged, is the primary and in; the old primary, now a replica, is out
// until the lag monitor has measured it as one.
BOOST_AUTO_TEST_CASE(each_reload_gives_the_read_servers_the_figures_of_their_role) {
  auto board = std::make_unique<SharedState>();
  const auto replica = server_key("replica:3306"), primary = server_key("primary:3306");
  const std::uint64_t before[] = {replica, primary};
  board->assign_read_servers(before, /*lag_checked=*/true);
  auto* r = board->find_server(replica);
  auto* p = board->find_server(primary);
  BOOST_REQUIRE(r != nullptr);
  BOOST_REQUIRE(p != nullptr);
  BOOST_TEST(r->in_rotation.load() == 0u);  // not measured yet
  BOOST_TEST(p->in_rotation.load() == 1u);
  // Measured: the replica lags (out), the primary's clock is read.
  r->lag_ms.store(9'000);
  r->measured_unix_ms.store(kNow);
  p->clock_us.store(kNow * 1000);
  p->lag_ms.store(1'000);
  p->measured_unix_ms.store(kNow);
  board->assign_read_servers(before, true);  // a reload that changes no server keeps them
  BOOST_TEST(r->lag_ms.load() == 9'000);
  BOOST_TEST(p->clock_us.load() == kNow * 1000);

  const std::uint64_t promoted[] = {primary, replica};
  board->assign_read_servers(promoted, true);
  BOOST_TEST(r->in_rotation.load() == 1u);  // the primary now
  BOOST_TEST(r->lag_ms.load() == -1);
  BOOST_TEST(p->in_rotation.load() == 0u);  // a replica now, not measured as one
  BOOST_TEST(p->clock_us.load() == 0);
  BOOST_TEST(p->measured_unix_ms.load() == 0);

  // The lag check off: every figure cleared, every server in.
  p->in_rotation.store(0);
  board->assign_read_servers(promoted, false);
  BOOST_TEST(p->in_rotation.load() == 1u);
  BOOST_TEST(p->measured_unix_ms.load() == 0);
}
