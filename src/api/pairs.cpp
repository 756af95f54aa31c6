// GET /v1/pairs: the asset pairs with their deposit, fee and threshold settings.
#include "api/reference_list.h"
#include "json/reference_writer.h"

namespace connector::api {

CachePolicy pairs(const http::QueryParams&, Services& services, json::JsonWriter& out) {
  thread_local RenderedList rendered;
  return write_reference_list(services, out, rendered, "pairs", &domain::ReferenceData::pairs,
                              json::write_pair);
}

}  // namespace connector::api
