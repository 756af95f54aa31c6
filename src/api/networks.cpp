// GET /v1/networks: the chains of this deployment.
#include "api/endpoints.h"
#include "json/reference_writer.h"

namespace connector::api {

std::string_view networks(const http::QueryParams&, Services& services, json::JsonWriter& out) {
  const auto data = services.reference.get(services.db);
  out.StartObject();
  json::key(out, "networks");
  out.StartArray();
  for (const auto& chain : data->chains) json::write_chain(out, chain);
  out.EndArray();
  out.EndObject();
  return kReferenceCacheControl;
}

}  // namespace connector::api
