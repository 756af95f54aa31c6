// GET /v1/connects: which chains are joined.
#include "api/params.h"
#include "api/reference_list.h"
#include "json/reference_writer.h"

namespace connector::api {

namespace {

Answer connects(const ValidParams&, Services& services, json::JsonWriter& out) {
  thread_local RenderedList rendered;
  return write_reference_list(services, out, rendered, "connects", &domain::ReferenceData::connects,
                              json::write_connect);
}

}  // namespace

const EndpointSpec kConnectsEndpoint("/v1/connects", {}, kReferenceCacheControl, connects);

}  // namespace connector::api
