// GET /v1/pairs: the asset pairs with their deposit, fee and threshold settings.
#include "api/params.h"
#include "api/reference_list.h"
#include "json/reference_writer.h"

namespace connector::api {

namespace {

struct PairsBody;  // json::ThreadRenderedBody's tag

Answer pairs(const RequestContext&, const Services& services, json::JsonWriter& out) {
  return write_reference_list<PairsBody>(services, out, "pairs", &domain::ReferenceData::pairs,
                                         json::write_pair);
}

}  // namespace

const EndpointSpec kPairsEndpoint("/v1/pairs", {}, kReferenceCacheControl, pairs);

}  // namespace connector::api
