#define BOOST_TEST_MODULE test_endpoint_labels
#include <boost/test/unit_test.hpp>

#include <cstddef>
#include <string>
#include <string_view>

#include "api/router.h"
#include "metrics/exposition.h"
#include "pool/shared_state.h"

using namespace connector;

namespace {

std::size_t count_of(const std::string& text, std::string_view needle) {
  std::size_t n = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

}  // namespace

// The one registration (CONNECTOR_API_ENDPOINTS) is the metrics' list: each described path in
// kEndpoints' order, then the operations paths and anything unknown.
BOOST_AUTO_TEST_CASE(the_labels_are_the_described_paths_then_ops_and_unknown) {
  const auto labels = api::endpoint_labels();
  BOOST_TEST_REQUIRE(labels.size() == std::size(api::kEndpoints) + 2);
  for (std::size_t i = 0; i < std::size(api::kEndpoints); ++i) {
    BOOST_TEST(labels[i] == api::kEndpoints[i]->path);
  }
  BOOST_TEST(labels[api::kOpsEndpoint] == "ops");
  BOOST_TEST(labels[api::kUnknownEndpoint] == "unknown");
}

// The scoreboard has room to spare: /metrics shows the labelled slots only, never the rest.
BOOST_AUTO_TEST_CASE(metrics_show_the_labelled_slots_only) {
  metrics::Scoreboard board;
  board.record(metrics::kEndpointSlots - 1, 200, 10, false);  // a slot nothing labels
  board.record(api::kUnknownEndpoint, 404, 10, false);
  const pool::SharedState state;
  rapidjson::StringBuffer out;
  metrics::write_prometheus(board, state, api::endpoint_labels(), {}, 0, out);
  const std::string text(out.GetString(), out.GetSize());
  BOOST_TEST(count_of(text, "connector_request_duration_seconds_count{") ==
             api::endpoint_labels().size());
  BOOST_TEST(count_of(text, "connector_requests_total{") == 1U);
  BOOST_TEST(count_of(text, "endpoint=\"\"") == 0U);
}

// A hand-over's header: the subscriber location of the channel, past its "h:" or "a:".
BOOST_AUTO_TEST_CASE(a_hand_over_names_the_channels_location) {
  const auto answer = api::Answer::hand_over("record", "h:abc");
  BOOST_TEST((answer.kind == api::Answer::kEventStream));
  BOOST_TEST(answer.redirect_header() == "X-Accel-Redirect: /connector-events/record/abc\r\n");
}
