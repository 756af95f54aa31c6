// GET /v1/history: a page of transfers matching the filters, with exact totals.
#include <array>
#include <stdexcept>

#include "api/endpoints.h"
#include "api/params.h"
#include "db/history_filters.h"
#include "json/history_writer.h"

namespace connector::api {
namespace {

// The page's parameters, then one per filter (db/history_filters.h): checked in this order, the
// filters echoed in the answer in this order too, with their wire names (the contract's). The
// first page, newest first, of the default size (kDefaultPageSize: test_endpoints_history) when
// absent.
constexpr ParamSpec kPageParams[] = {
    {.name = "page_id", .kind = ParamKind::kUint64, .absent_means = "0"},
    {.name = "page_size", .kind = ParamKind::kPageSize, .absent_means = "20"},
    {.name = "order", .kind = ParamKind::kSortOrder, .absent_means = "DESC"},
};

// The validator of a filter's values.
constexpr ParamKind param_kind(db::FilterKind kind) {
  switch (kind) {
    case db::FilterKind::kAddress:
      return ParamKind::kAddress;
    case db::FilterKind::kChain:
      return ParamKind::kSlug;
    case db::FilterKind::kId:
      return ParamKind::kUint64;
    case db::FilterKind::kTxHash:
      return ParamKind::kTxHash;
    case db::FilterKind::kStatus:
      return ParamKind::kHistoryStatus;
  }
  throw std::logic_error("a filter kind without a parameter kind");
}

constexpr auto kParams = [] {
  std::array<ParamSpec, std::size(kPageParams) + db::kHistoryFilterCount> params{};
  std::size_t n = 0;
  for (const auto& page : kPageParams) params[n++] = page;
  for (const auto& f : db::kHistoryFilters) {
    params[n++] = {f.param, param_kind(f.kind), /*required=*/false, f.echo};
  }
  return params;
}();

template <typename T, typename Bind>
db::Param bound(const std::optional<T>& value, Bind bind) {
  return value ? db::Param(bind(*value)) : db::Param();
}

// A filter's validated value as the statements bind it (db::FilterKind); NULL when absent.
db::Param filter_value(const ValidParams& params, const db::HistoryFilterSpec& filter) {
  const auto name = filter.param;
  switch (filter.kind) {
    case db::FilterKind::kAddress:
      return bound(params.get<chain::Address>(name), [](const auto& a) { return a.lower(); });
    case db::FilterKind::kChain:
      return bound(params.get<const domain::Chain*>(name),
                   [](const auto* chain) { return std::uint64_t{chain->ref}; });
    case db::FilterKind::kId:
      return bound(params.get<std::uint64_t>(name), [](auto id) { return id; });
    case db::FilterKind::kTxHash:
      return bound(params.get<std::string>(name), [](const auto& hash) { return hash; });
    case db::FilterKind::kStatus:
      return bound(params.get<domain::HistoryStatus>(name),
                   [](auto status) { return std::string(domain::status_name(status)); });
  }
  throw std::logic_error("a filter kind without a value");
}

// The history reader's filters (db::HistoryFilter) from the validated parameters.
db::HistoryFilter filter_of(const ValidParams& params) {
  db::HistoryFilter filter;
  for (std::size_t i = 0; i < db::kHistoryFilterCount; ++i) {
    filter.values[i] = filter_value(params, db::kHistoryFilters[i]);
  }
  return filter;
}

Answer history(const RequestContext& request, const Services& services, json::JsonWriter& out) {
  const ValidParams& params = request.params;
  // Never absent: each has the value its absence stands for (ParamSpec::absent_means).
  const auto page_id = params.get<std::uint64_t>("page_id").value();
  const auto page_size = params.get<std::uint32_t>("page_size").value();
  const auto order = params.get<domain::SortOrder>("order").value();
  const auto page = services.history.find_page(filter_of(params), page_id, page_size, order);
  const std::uint64_t total_page = (page.total + page_size - 1) / page_size;

  out.StartObject();
  json::member_as_string(out, "page_id", page_id);
  json::member_as_string(out, "page_size", page_size);
  json::member_as_string(out, "total_page", total_page);
  json::member_as_string(out, "total_history", page.total);
  json::key(out, "list");
  out.StartArray();
  const auto reference =
      services.reference.covering(params.reference(), page.records, request.deadline);
  for (const auto& record : page.records) {
    json::write_history_record(out, record, *reference, /*with_status_message=*/false);
  }
  out.EndArray();
  params.write_echo(out);
  out.EndObject();
  // An empty page (past the end, or nothing matches: any number of them can be asked for) is
  // answered but not stored by nginx, whose cache holds only pages with records.
  return page.records.empty() ? Answer::kNotFrontCached : Answer::kUsual;
}

}  // namespace

const EndpointSpec kHistoryEndpoint("/v1/history", kParams, kHistoryCacheControl, history);

}  // namespace connector::api
