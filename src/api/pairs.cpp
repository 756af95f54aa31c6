// GET /v1/pairs: the asset pairs with their deposit, fee and threshold settings.
#include "api/endpoints.h"
#include "json/reference_writer.h"

namespace connector::api {

std::string_view pairs(const http::QueryParams&, Services& services, json::JsonWriter& out) {
  const auto data = services.reference.get(services.db);
  out.StartObject();
  json::key(out, "pairs");
  out.StartArray();
  for (const auto& pair : data->pairs) json::write_pair(out, pair, *data);
  out.EndArray();
  out.EndObject();
  return kReferenceCacheControl;
}

}  // namespace connector::api
