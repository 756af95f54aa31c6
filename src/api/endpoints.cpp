#include "api/endpoints.h"

#include <stdexcept>
#include <utility>

namespace connector::api {

EndpointSpec::EndpointSpec(std::string_view path, std::span<const ParamSpec> params,
                           CachePolicy cache, Handler handler, Body body)
    : path(path), params(params), cache(cache), handler(handler), body(body) {
  for (const auto& param : params) names.push_back(param.name);
}

Answer Answer::hand_over(std::string_view subscriber, std::string channel) {
  Answer answer(kEventStream);
  answer.subscriber = subscriber;
  answer.channel = std::move(channel);  // the handler's own string: no copy
  return answer;
}

Answer Answer::missed(std::string events) {
  Answer answer(kMissedEvents);
  answer.events = std::move(events);
  return answer;
}

std::string Answer::redirect_header() const {
  constexpr std::string_view kStart = "X-Accel-Redirect: /connector-events/";
  // Past the "h:" or "a:": the location's pattern puts it back.
  const std::string_view name = std::string_view(channel).substr(2);
  std::string line;
  line.reserve(kStart.size() + subscriber.size() + 1 + name.size() + 2);
  line.append(kStart).append(subscriber).append("/").append(name).append("\r\n");
  return line;
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
