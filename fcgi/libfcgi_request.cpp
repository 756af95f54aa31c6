#include "libfcgi_request.h"

namespace connector::fcgi {

LibfcgiRequest::LibfcgiRequest() { FCGX_InitRequest(&request_, -1, 0); }

LibfcgiRequest::~LibfcgiRequest() { FCGX_Free(&request_, /*close=*/1); }

std::string_view LibfcgiRequest::param(const char* name) const {
  const char* value = FCGX_GetParam(name, request_.envp);
  return value == nullptr ? std::string_view{} : std::string_view{value};
}

std::string_view LibfcgiRequest::path() const {
  std::string_view path = param("DOCUMENT_URI");
  if (path.empty()) {
    path = param("REQUEST_URI");
    path = path.substr(0, path.find('?'));
  }
  return path;
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
