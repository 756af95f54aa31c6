// GET /v1/connects: which chains are joined.
#include "api/endpoints.h"
#include "json/reference_writer.h"

namespace connector::api {

std::string_view connects(const http::QueryParams&, Services& services, json::JsonWriter& out) {
  const auto data = services.reference.get(services.db);
  out.StartObject();
  json::key(out, "connects");
  out.StartArray();
  for (const auto& connect : data->connects) json::write_connect(out, connect, *data);
  out.EndArray();
  out.EndObject();
  return kReferenceCacheControl;
}

}  // namespace connector::api
