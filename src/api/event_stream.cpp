#include "api/event_stream.h"

#include "http/api_error.h"

namespace connector::api {

void require_events(const Services& services) {
  if (services.events == nullptr) {
    throw http::ApiError(404, "not_found", "Events are not served here");
  }
}

Answer event_stream(Services& services, std::string_view kind, const std::string& channel) {
  services.event_stream = "/connector-events/";
  services.event_stream += kind;
  services.event_stream += '/';
  // Past the "h:" or "a:": the location's pattern puts it back.
  services.event_stream += std::string_view(channel).substr(2);
  return Answer::kEventStream;
}

}  // namespace connector::api
