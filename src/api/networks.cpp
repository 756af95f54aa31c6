// GET /v1/networks: the chains of this deployment.
#include "api/params.h"
#include "api/reference_list.h"
#include "json/reference_writer.h"

namespace connector::api {

namespace {

struct NetworksBody;  // json::ThreadRenderedBody's tag

Answer networks(const RequestContext&, const Services& services, json::JsonWriter& out) {
  return write_reference_list<NetworksBody>(
      services, out, "networks", &domain::ReferenceData::chains,
      [](json::JsonWriter& w, const domain::Chain& chain, const domain::ReferenceData&) {
        json::write_chain(w, chain);
      });
}

}  // namespace

const EndpointSpec kNetworksEndpoint("/v1/networks", {}, kReferenceCacheControl, networks);

}  // namespace connector::api
