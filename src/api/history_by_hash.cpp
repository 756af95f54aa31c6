// GET /v1/history/hash: one record by its hash.
#include "api/endpoints.h"
#include "api/params.h"
#include "http/api_error.h"
#include "json/history_writer.h"

namespace connector::api {
namespace {

constexpr ParamSpec kParams[] = {{"hash", ParamKind::kRecordHash, /*required=*/true}};

Answer history_by_hash(const RequestContext& request, const Services& services,
                       json::JsonWriter& out) {
  const ValidParams& params = request.params;
  const auto record = services.history.find_by_hash(*params.get<std::string>("hash"));
  if (!record) throw http::ApiError(404, "not_found", "No history record has this hash", "hash");

  json::write_record_answer(out, *record, *services.reference.covering(*record, request.deadline));
  // Confirmed and Error are final: the record will not change again.
  return domain::is_final(record->status) ? Answer::kFinal : Answer::kUsual;
}

}  // namespace

const EndpointSpec kHistoryByHashEndpoint("/v1/history/hash", kParams,
                                          {kHistoryCacheControl, kFinalRecordCacheControl},
                                          history_by_hash);

}  // namespace connector::api
