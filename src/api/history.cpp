// GET /v1/history: a page of transfers matching the filters, with exact totals.
#include "api/endpoints.h"
#include "api/params.h"
#include "api/record_reference.h"
#include "json/history_writer.h"

namespace connector::api {
namespace {

// Checked in this order; the filters echoed in the answer in this order too, with their wire
// names (the contract's).
constexpr ParamSpec kParams[] = {
    {"page_id", ParamKind::kUint64},
    {"page_size", ParamKind::kPageSize},
    {"order", ParamKind::kSortOrder},
    {"source_deposit_address", ParamKind::kAddress, false, "source_deposit_address"},
    {"source_sender", ParamKind::kAddress, false, "source_sender"},
    {"source_blockchain", ParamKind::kSlug, false, "source_blockchain"},
    {"source_asset_id", ParamKind::kUint64, false, "source_asset_id"},
    {"source_tx_hash", ParamKind::kTxHash},
    {"destination_address", ParamKind::kAddress, false, "destination_address"},
    {"destination_blockchain", ParamKind::kSlug, false, "destination_blockchain"},
    {"destination_asset_id", ParamKind::kUint64, false, "destination_asset_id"},
    {"destination_tx_hash", ParamKind::kTxHash},
    {"pair_id", ParamKind::kUint64, false, "pairId"},
    {"status", ParamKind::kHistoryStatus, false, "status"},
};

std::optional<std::string> lower_address(const ValidParams& params, std::string_view name) {
  const auto address = params.get<chain::Address>(name);
  return address ? std::optional(address->lower()) : std::nullopt;
}

std::optional<std::uint16_t> chain_ref(const ValidParams& params, std::string_view name) {
  const auto chain = params.get<const domain::Chain*>(name);
  return chain ? std::optional((*chain)->ref) : std::nullopt;
}

// The store's filters from the validated parameters.
domain::HistoryFilter filter_of(const ValidParams& params) {
  domain::HistoryFilter f;
  f.source_deposit_address = lower_address(params, "source_deposit_address");
  f.source_sender = lower_address(params, "source_sender");
  f.source_chain = chain_ref(params, "source_blockchain");
  f.source_asset_id = params.get<std::uint64_t>("source_asset_id");
  f.source_tx_hash = params.get<std::string>("source_tx_hash");
  f.destination_address = lower_address(params, "destination_address");
  f.destination_chain = chain_ref(params, "destination_blockchain");
  f.destination_asset_id = params.get<std::uint64_t>("destination_asset_id");
  f.destination_tx_hash = params.get<std::string>("destination_tx_hash");
  f.pair_id = params.get<std::uint64_t>("pair_id");
  f.status = params.get<domain::HistoryStatus>("status");
  return f;
}

Answer history(const ValidParams& params, Services& services, json::JsonWriter& out) {
  const auto page_id = params.get<std::uint64_t>("page_id").value_or(0);
  const auto page_size = params.get<std::uint32_t>("page_size").value_or(kDefaultPageSize);
  const auto order =
      params.get<domain::SortOrder>("order").value_or(domain::SortOrder::kDescending);
  const auto page = services.history.find_page(filter_of(params), page_id, page_size, order);
  const std::uint64_t total_page = (page.total + page_size - 1) / page_size;

  out.StartObject();
  json::member_as_string(out, "page_id", page_id);
  json::member_as_string(out, "page_size", page_size);
  json::member_as_string(out, "total_page", total_page);
  json::member_as_string(out, "total_history", page.total);
  json::key(out, "list");
  out.StartArray();
  const auto reference = reference_covering(services.reference, services.deadline, params.reference(), page.records);
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
