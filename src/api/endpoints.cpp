#include "api/endpoints.h"

#include <stdexcept>

namespace connector::api {

EndpointSpec::EndpointSpec(std::string_view path, std::span<const ParamSpec> params,
                           CachePolicy cache, Handler handler, Body body)
    : path(path), params(params), cache(cache), handler(handler), body(body) {
  for (const auto& param : params) names.push_back(param.name);
}

std::string_view openapi_schema(ParamKind kind) {
  switch (kind) {
    case ParamKind::kUint64:
    case ParamKind::kPageSize:
      return "Uint64Parameter";
    case ParamKind::kAddress:
      return "Address";
    case ParamKind::kTxHash:
      return "TxHashParameter";
    case ParamKind::kRecordHash:
      return "RecordHashParameter";
    case ParamKind::kSlug:
      return "Slug";
    case ParamKind::kHistoryStatus:
      return "HistoryStatusParameter";
    case ParamKind::kSortOrder:
      return "SortOrderParameter";
  }
  throw std::logic_error("a parameter kind without a schema");
}

}  // namespace connector::api
