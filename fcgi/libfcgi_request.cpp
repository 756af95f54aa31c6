#include "libfcgi_request.h"

#include <utility>

namespace connector::fcgi {

LibfcgiRequest::LibfcgiRequest() { FCGX_InitRequest(&request_, -1, 0); }

LibfcgiRequest::~LibfcgiRequest() { FCGX_Free(&request_, /*close=*/1); }

LibfcgiRequest::Params LibfcgiRequest::params() const {
  using P = Params;
  static constexpr std::pair<std::string_view, std::string_view P::*> kNames[] = {
      {"REQUEST_METHOD", &P::method},
      {"DOCUMENT_URI", &P::document_uri},
      {"REQUEST_URI", &P::request_uri},
      {"QUERY_STRING", &P::query_string},
      {"REQUEST_ID", &P::request_id},
      {"HTTP_IF_NONE_MATCH", &P::if_none_match},
      {"HTTP_LAST_EVENT_ID", &P::last_event_id},
      {"HTTP_IF_MODIFIED_SINCE", &P::if_modified_since},
      {"HTTP_ACCEPT", &P::accept},
      {"HTTP_UPGRADE", &P::upgrade},
  };
  Params params;
  for (char** variable = request_.envp; variable != nullptr && *variable != nullptr; ++variable) {
    const std::string_view entry(*variable);  // NAME=value
    const std::size_t equals = entry.find('=');
    if (equals == std::string_view::npos) continue;
    const std::string_view name = entry.substr(0, equals);
    for (const auto& [known, member] : kNames) {
      if (name != known) continue;
      if ((params.*member).data() == nullptr) params.*member = entry.substr(equals + 1);
      break;
    }
  }
  return params;
}

std::string_view LibfcgiRequest::Params::path() const {
  if (!document_uri.empty()) return document_uri;
  return request_uri.substr(0, request_uri.find('?'));
}

void LibfcgiRequest::skip_stdin() {
  char discard[1024];
  while (FCGX_GetStr(discard, sizeof discard, request_.in) > 0) {
  }
}

// isClosed and wasFCloseCalled are fields of FCGX_Stream, public in fcgiapp.h.
void LibfcgiRequest::mark_written() {
  for (FCGX_Stream* stream : {request_.out, request_.err}) {
    stream->isClosed = 1;
    stream->wasFCloseCalled = 1;
  }
}

}  // namespace connector::fcgi
