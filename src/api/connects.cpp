// GET /v1/connects: which chains are joined.
#include "api/reference_list.h"
#include "json/reference_writer.h"

namespace connector::api {

CachePolicy connects(const http::QueryParams&, Services& services, json::JsonWriter& out) {
  thread_local RenderedList rendered;
  return write_reference_list(services, out, rendered, "connects", &domain::ReferenceData::connects,
                              json::write_connect);
}

}  // namespace connector::api
