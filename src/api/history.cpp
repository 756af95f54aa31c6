// GET /v1/history: a page of transfers matching the filters, with exact totals.
#include "api/endpoints.h"
#include "api/params.h"
#include "api/record_reference.h"
#include "json/history_writer.h"

namespace connector::api {
namespace {

// The request after validation: typed filters for the store, and the echo block as the client
// wrote it (addresses in its case, status in canonical case, "" for unused filters).
struct HistoryQuery {
  std::uint64_t page_id = 0;
  std::uint32_t page_size = kDefaultPageSize;
  domain::SortOrder order = domain::SortOrder::kDescending;
  domain::HistoryFilter filter;
  std::vector<std::pair<std::string_view, std::string>> echo;
};

// The echoed filters, in the contract's order, with their wire names.
constexpr std::pair<std::string_view, std::string_view> kEchoedFilters[] = {
    {"source_deposit_address", "source_deposit_address"},
    {"source_sender", "source_sender"},
    {"source_blockchain", "source_blockchain"},
    {"source_asset_id", "source_asset_id"},
    {"destination_address", "destination_address"},
    {"destination_blockchain", "destination_blockchain"},
    {"destination_asset_id", "destination_asset_id"},
    {"pair_id", "pairId"},
    {"status", "status"},
};

HistoryQuery parse_query(const http::QueryParams& params, const domain::ReferenceData& data) {
  HistoryQuery q;
  auto& f = q.filter;
  if (auto v = params.get("page_id")) q.page_id = parse_uint64("page_id", *v);
  if (auto v = params.get("page_size")) q.page_size = parse_page_size("page_size", *v);
  if (auto v = params.get("order")) q.order = parse_order("order", *v);

  auto address = [&](std::string_view name, std::optional<std::string>& slot) {
    if (auto v = params.get(name)) slot = parse_address(name, *v).lower();
  };
  auto chain = [&](std::string_view name, std::optional<std::uint16_t>& slot) {
    if (auto v = params.get(name)) slot = parse_slug(name, *v, data).ref;
  };
  auto id = [&](std::string_view name, std::optional<std::uint64_t>& slot) {
    if (auto v = params.get(name)) slot = parse_uint64(name, *v);
  };
  auto tx_hash = [&](std::string_view name, std::optional<std::string>& slot) {
    if (auto v = params.get(name)) slot = parse_tx_hash(name, *v);
  };
  address("source_deposit_address", f.source_deposit_address);
  address("source_sender", f.source_sender);
  chain("source_blockchain", f.source_chain);
  id("source_asset_id", f.source_asset_id);
  tx_hash("source_tx_hash", f.source_tx_hash);
  address("destination_address", f.destination_address);
  chain("destination_blockchain", f.destination_chain);
  id("destination_asset_id", f.destination_asset_id);
  tx_hash("destination_tx_hash", f.destination_tx_hash);
  id("pair_id", f.pair_id);
  if (auto v = params.get("status")) f.status = parse_status("status", *v);

  for (const auto& [param, wire_name] : kEchoedFilters) {
    const auto value = params.get(param);
    q.echo.emplace_back(wire_name, param == "status" && f.status
                                       ? std::string(domain::status_name(*f.status))
                                       : std::string(value.value_or("")));
  }
  return q;
}

}  // namespace

CachePolicy history(const http::QueryParams& params, Services& services, json::JsonWriter& out) {
  const auto data = services.reference.get();
  const HistoryQuery q = parse_query(params, *data);

  const auto page = services.history.find_page(q.filter, q.page_id, q.page_size, q.order);
  const std::uint64_t total_page = (page.total + q.page_size - 1) / q.page_size;

  out.StartObject();
  json::member_as_string(out, "page_id", q.page_id);
  json::member_as_string(out, "page_size", q.page_size);
  json::member_as_string(out, "total_page", total_page);
  json::member_as_string(out, "total_history", page.total);
  json::key(out, "list");
  out.StartArray();
  const auto reference = reference_covering(services, data, page.records);
  for (const auto& record : page.records) {
    json::write_history_record(out, record, *reference, /*with_status_message=*/false);
  }
  out.EndArray();
  for (const auto& [name, value] : q.echo) json::member(out, name, value);
  out.EndObject();
  // An empty page (past the end, or nothing matches: any number of them can be asked for) is
  // answered but not stored by nginx, whose cache holds only pages with records.
  return {kHistoryCacheControl, /*front_cache=*/!page.records.empty()};
}

}  // namespace connector::api
