// GET /v1/ab: status, height and coin supply per chain, from the process's refreshed supply.
#include "api/endpoints.h"
#include "api/params.h"
#include "chain/amount.h"
#include "json/rendered_body.h"

namespace connector::api {
namespace {

using Chains = std::vector<db::ChainSupply>;

void write_chains(json::JsonWriter& out, const Chains& chains) {
  out.StartObject();
  json::key(out, "chains");
  out.StartArray();
  for (const auto& c : chains) {
    out.StartObject();
    json::member(out, "slug", c.slug);
    json::member(out, "network", c.network);
    json::member(out, "chain_id", c.chain_id);
    json::member(out, "base_chain", c.base_chain);
    json::member(out, "status", domain::status_name(c.status));
    json::member(out, "latest_height", c.latest_height);
    json::member(out, "name", c.name);
    json::member(out, "symbol", c.symbol);
    json::member_int(out, "decimals", c.decimals);
    json::member(out, "supply", chain::format_units(c.supply, c.decimals));
    out.EndObject();
  }
  out.EndArray();
  out.EndObject();
}

struct ChainSupplyBody;  // json::ThreadRenderedBody's tag

Answer chain_supply(const RequestContext&, const Services& services, json::JsonWriter& out) {
  json::ThreadRenderedBody<Chains, ChainSupplyBody>::write(out, services.supply.get(),
                                                           write_chains);
  return Answer::kUsual;
}

}  // namespace

const EndpointSpec kChainSupplyEndpoint("/v1/ab", {}, kSupplyCacheControl, chain_supply);

}  // namespace connector::api
