// The database servers as the operations pages show them (metrics::write_db_servers, the
// server series of write_prometheus): roles, rotation, lag, and addresses escaped.
#define BOOST_TEST_MODULE db_servers
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <boost/test/unit_test.hpp>
#include <memory>
#include <string>
#include <vector>

#include "metrics/exposition.h"
#include "metrics/scoreboard.h"

using namespace connector::metrics;

namespace {

constexpr std::int64_t kNow = 1'800'000'000'000;  // unix ms
const std::vector<std::string> kServers = {"unix:/run/replica \"1\"\\.sock", "10.0.0.21:3306",
                                           "10.0.0.5:3306"};

std::string json(const Scoreboard& board) {
  rapidjson::StringBuffer out;
  rapidjson::Writer<rapidjson::StringBuffer> w(out);
  write_db_servers(board, kServers, w);
  return out.GetString();
}

// The lines of the Prometheus text that name a database server or the primary's heartbeat.
std::string server_lines(const Scoreboard& board) {
  rapidjson::StringBuffer out;
  const std::string_view labels[kEndpointSlots] = {"a", "b", "c", "d", "e", "f", "g", "h", "i"};
  write_prometheus(board, EndpointLabels(labels, kEndpointSlots), kServers, kNow, out);
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

void measure(Scoreboard& board, const std::string& server, bool in, std::int64_t lag_ms,
             std::int64_t at) {
  auto* slot = board.server_slot(server_key(server));
  BOOST_REQUIRE(slot != nullptr);
  slot->in_rotation.store(in ? 1 : 0);
  slot->lag_ms.store(lag_ms);
  slot->measured_unix_ms.store(at);
}

}  // namespace

BOOST_AUTO_TEST_CASE(servers_not_measured_are_in_rotation_with_unknown_lag) {
  auto board = std::make_unique<Scoreboard>();
  BOOST_TEST(json(*board) ==
             R"([{"server":"unix:/run/replica \"1\"\\.sock","role":"replica","in_rotation":true,)"
             R"("lag_seconds":null,"measured_unix_ms":0},)"
             R"({"server":"10.0.0.21:3306","role":"replica","in_rotation":true,)"
             R"("lag_seconds":null,"measured_unix_ms":0},)"
             R"({"server":"10.0.0.5:3306","role":"primary","in_rotation":true,)"
             R"("heartbeat_age_seconds":null,"measured_unix_ms":0}])");
  BOOST_TEST(server_lines(*board) ==
             "connector_db_server_in_rotation{server=\"unix:/run/replica \\\"1\\\"\\\\.sock\"} 1\n"
             "connector_db_server_in_rotation{server=\"10.0.0.21:3306\"} 1\n"
             "connector_db_server_in_rotation{server=\"10.0.0.5:3306\"} 1\n");
}

BOOST_AUTO_TEST_CASE(measured_servers_show_their_state_and_stale_figures_are_not_exposed) {
  auto board = std::make_unique<Scoreboard>();
  measure(*board, kServers[0], false, 12'345, kNow - 1000);
  measure(*board, kServers[1], true, 7, kNow - 6000);  // measured 6 s ago: not exposed
  measure(*board, kServers[2], true, 1'002, kNow);
  BOOST_TEST(json(*board) ==
             R"([{"server":"unix:/run/replica \"1\"\\.sock","role":"replica","in_rotation":false,)"
             R"("lag_seconds":12.345,"measured_unix_ms":1799999999000},)"
             R"({"server":"10.0.0.21:3306","role":"replica","in_rotation":true,)"
             R"("lag_seconds":0.007,"measured_unix_ms":1799999994000},)"
             R"({"server":"10.0.0.5:3306","role":"primary","in_rotation":true,)"
             R"("heartbeat_age_seconds":1.002,"measured_unix_ms":1800000000000}])");
  BOOST_TEST(server_lines(*board) ==
             "connector_db_server_in_rotation{server=\"unix:/run/replica \\\"1\\\"\\\\.sock\"} 0\n"
             "connector_db_server_in_rotation{server=\"10.0.0.21:3306\"} 1\n"
             "connector_db_server_in_rotation{server=\"10.0.0.5:3306\"} 1\n"
             "connector_db_replica_lag_seconds{server=\"unix:/run/replica \\\"1\\\"\\\\.sock\"} "
             "12.345\n"
             "connector_db_primary_heartbeat_age_seconds 1.002\n");
}

BOOST_AUTO_TEST_CASE(a_slot_is_found_by_its_server_and_freed_when_it_is_no_longer_read) {
  auto board = std::make_unique<Scoreboard>();
  auto* first = board->server_slot(server_key("a:1"));
  BOOST_TEST(board->server_slot(server_key("a:1")) == first);
  BOOST_TEST(board->server_slot(server_key("b:1")) != first);
  first->in_rotation.store(0);
  const std::uint64_t keep[] = {server_key("b:1")};
  board->release_servers_except(keep);
  BOOST_TEST(board->find_server(server_key("a:1")) == nullptr);
  BOOST_TEST(board->find_server(server_key("b:1")) != nullptr);
  // The freed slot comes back clean for the next server.
  auto* again = board->server_slot(server_key("c:1"));
  BOOST_TEST(again == first);
  BOOST_TEST(again->in_rotation.load() == 1u);
  // All slots taken: a further server has none (its state stays in its processes).
  for (int i = 0; i < static_cast<int>(kMaxServerSlots); ++i) {
    board->server_slot(server_key("s:" + std::to_string(i)));
  }
  BOOST_TEST(board->server_slot(server_key("one-too-many:1")) == nullptr);
}
