// GET /v1/pairs: the asset pairs with their deposit, fee and threshold settings.
#include "api/params.h"
#include "api/reference_list.h"
#include "json/reference_writer.h"

namespace connector::api {

namespace {

Answer pairs(const ValidParams&, Services& services, json::JsonWriter& out) {
  thread_local RenderedList rendered;
  return write_reference_list(services, out, rendered, "pairs", &domain::ReferenceData::pairs,
                              json::write_pair);
}

}  // namespace

const EndpointSpec kPairsEndpoint("/v1/pairs", {}, kReferenceCacheControl, pairs);

}  // namespace connector::api
