// The history endpoints (/v1/history, /v1/history/hash) through the router, on endpoint_fakes.h:
// their answers and what the history reader and its statements are given.
#define BOOST_TEST_MODULE test_endpoints_history
#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <map>
#include <string>
#include <utility>
#include <variant>

#include "api/params.h"
#include "db/history_filters.h"
#include "db/history_statements.h"
#include "endpoint_fakes.h"

using namespace connector;
using namespace connector::fakes;

BOOST_FIXTURE_TEST_SUITE(endpoints_on_fakes, Fixture)

BOOST_AUTO_TEST_CASE(history_with_filters) {
  const std::string address = "0x" + std::string(40, 'D');
  const auto doc =
      get("/v1/history", "status=confirmed&destination_address=" + address + "&order=asc",
          "public, max-age=2");
  BOOST_TEST(text(doc["total_history"]) == "1");
  BOOST_TEST(text(doc["total_page"]) == "1");
  BOOST_TEST(text(doc["page_size"]) == "20");
  BOOST_TEST_REQUIRE(doc["list"].Size() == 1u);
  const auto& r = doc["list"][0];
  BOOST_TEST(text(r["id"]) == "42");
  BOOST_TEST(r["pair_id"].GetUint64() == 7u);
  BOOST_TEST(text(r["source_network"]) == "UNITCore");
  BOOST_TEST(text(r["destination_slug"]) == "unitiot");
  BOOST_TEST(text(r["source_amount"]) == "1.5");
  BOOST_TEST(text(r["destination_amount"]) == "");
  BOOST_TEST(!r.HasMember("status_message"));
  BOOST_TEST(text(doc["status"]) == "Confirmed");
  BOOST_TEST(text(doc["destination_address"]) == address);  // echoed as sent
  // What the history reader was asked: typed, validated filters.
  BOOST_TEST_REQUIRE(history.filter.has_value());
  const auto& filter = *history.filter;
  BOOST_TEST((filter["status"] == db::Param(std::string("Confirmed"))));
  BOOST_TEST((filter["destination_address"] == db::Param("0x" + std::string(40, 'd'))));
  BOOST_TEST(!filter.is_set(db::history_filter("pair_id")));
}

// A parameter left out is the value its description says it stands for (absent_means): the
// same answer as that value written out, which nginx keys as one (scripts/nginx-contract); the
// page size's is the default.
BOOST_AUTO_TEST_CASE(an_absent_parameter_is_the_value_it_stands_for) {
  std::string written_out;
  for (const auto& p : api::kHistoryEndpoint.params) {
    if (p.absent_means.empty()) continue;
    if (p.kind == api::ParamKind::kPageSize) {
      BOOST_TEST(api::parse_page_size(p.name, p.absent_means) == api::kDefaultPageSize);
    }
    written_out += (written_out.empty() ? "" : "&") + std::string(p.name) + "=";
    written_out += p.absent_means;
  }
  BOOST_TEST(written_out == "page_id=0&page_size=20&order=DESC");
  const std::string left_out(router.handle({"GET", "/v1/history", "", {}, "rid-1"}).body);
  const auto spelled = router.handle({"GET", "/v1/history", written_out, {}, "rid-1"});
  BOOST_TEST(spelled.status == 200);
  BOOST_TEST(std::string(spelled.body) == left_out);
  BOOST_TEST(left_out.find(R"("page_id":"0","page_size":"20",)") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(empty_history_pages_are_not_for_nginx_to_store) {
  const auto page = router.handle({"GET", "/v1/history", "page_size=5", {}, "rid-1"});
  const auto past_end = router.handle({"GET", "/v1/history", "page_id=9", {}, "rid-1"});
  BOOST_TEST(page.status == 200);
  BOOST_TEST(page.head.find("X-Accel-Expires") == std::string::npos);
  BOOST_TEST(past_end.status == 200);
  BOOST_TEST(past_end.head.find("\r\nX-Accel-Expires: 0\r\n") != std::string::npos);
  // Clients and other caches still get the endpoint's Cache-Control.
  BOOST_TEST(past_end.head.find("\r\nCache-Control: public, max-age=2\r\n") != std::string::npos);
  BOOST_TEST(std::string(past_end.body).find("\"list\":[]") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(history_by_hash) {
  const auto doc = get("/v1/history/hash", "hash=0X" + std::string(64, 'A'),
                       "public, max-age=3600");  // Confirmed is final
  BOOST_TEST(text(doc["id"]) == "42");
  BOOST_TEST(text(doc["hash"]) == std::string(64, 'a'));
  BOOST_TEST(text(doc["status"]) == "Confirmed");
  BOOST_TEST(text(doc["status_message"]) ==
             "The transfer is complete: the payout is confirmed on the destination chain.");
}

BOOST_AUTO_TEST_SUITE_END()

// How many filters of a history filter are set.
int filters_set(const db::HistoryFilter& f) {
  return static_cast<int>(std::count_if(f.values.begin(), f.values.end(), [](const db::Param& v) {
    return !std::holds_alternative<std::monostate>(v);
  }));
}

// Every filter of /v1/history's description reaches the history reader and its statements: a
// value for it alone sets its own row's value of the reader's filter (db::kHistoryFilters) and no
// other, and that value, as the row's kind binds it, is the only one bound in the page statement.
// And the description has a parameter for every row. A kind whose parameter kind or binding
// (api/history.cpp) is wrong fails here.
BOOST_FIXTURE_TEST_CASE(every_described_history_filter_reaches_the_statements, Fixture) {
  using api::ParamKind;
  // A valid value of each kind, and how the statements bind it.
  const std::map<ParamKind, std::pair<std::string, db::Param>> valid = {
      {ParamKind::kUint64, {"7", std::uint64_t{7}}},
      {ParamKind::kAddress, {"0x" + std::string(40, 'A'), "0x" + std::string(40, 'a')}},
      {ParamKind::kTxHash, {"0x" + std::string(64, 'B'), "0x" + std::string(64, 'b')}},
      {ParamKind::kSlug, {"unitiot", std::uint64_t{2}}},
      {ParamKind::kHistoryStatus, {"pending", std::string("Pending")}},
  };
  std::size_t filters = 0;
  for (const auto& param : api::kHistoryEndpoint.params) {
    if (param.name == "page_id" || param.name == "page_size" || param.name == "order") continue;
    const std::size_t row = db::history_filter(param.name);  // throws for a name without a row
    BOOST_TEST(row == filters, param.name);                  // in the rows' order
    ++filters;
    history.filter.reset();
    const auto& [value, bound_as] = valid.at(param.kind);
    get("/v1/history", std::string(param.name) + "=" + value, api::kHistoryCacheControl);
    BOOST_TEST_REQUIRE(history.filter.has_value());
    const auto& f = *history.filter;
    BOOST_TEST(filters_set(f) == 1, param.name);
    BOOST_TEST((f.values[row] == bound_as), param.name);
    const auto statement = db::page_statement(
        db::choose_access_path(f), f, domain::SortOrder::kDescending, db::PageForm::kDirect);
    const auto bound = std::count_if(statement.params.begin(), statement.params.end(),
                                     [](const db::Param& p) { return p.index() != 0; });
    const auto bound_value = std::count(statement.params.begin(), statement.params.end(), bound_as);
    // The value (as a driving value, a residual pair or both) and the count's copy of it;
    // nothing else bound (LIMIT and OFFSET come after the statement's own).
    BOOST_TEST(bound_value >= 2, param.name);
    BOOST_TEST(bound == bound_value, param.name);
  }
  BOOST_TEST(filters == db::kHistoryFilterCount);
}
