// GET /v1/connects: which chains are joined.
#include "api/params.h"
#include "api/reference_list.h"
#include "json/reference_writer.h"

namespace connector::api {

namespace {

struct ConnectsBody;  // json::ThreadRenderedBody's tag

Answer connects(const RequestContext&, const Services& services, json::JsonWriter& out) {
  return write_reference_list<ConnectsBody>(services, out, "connects",
                                            &domain::ReferenceData::connects, json::write_connect);
}

}  // namespace

const EndpointSpec kConnectsEndpoint("/v1/connects", {}, kReferenceCacheControl, connects);

}  // namespace connector::api
