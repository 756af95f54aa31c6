#pragma once
// libfcgi's request as this worker uses it: initialised once per thread for connections the
// pool hands over (WorkerPool::read_request), its CGI variables read in place, its body skipped,
// and its output marked written by our own record writer (stdout_records.h) so that libfcgi
// never writes to the connection.
#include <fcgiapp.h>

#include <string_view>

namespace connector::fcgi {

class LibfcgiRequest {
 public:
  LibfcgiRequest();
  ~LibfcgiRequest();  // FCGX_Free
  LibfcgiRequest(const LibfcgiRequest&) = delete;
  LibfcgiRequest& operator=(const LibfcgiRequest&) = delete;

  FCGX_Request& get() { return request_; }
  // A CGI variable of the request read; "" when absent. Valid until FCGX_Finish_r.
  std::string_view param(const char* name) const;
  // nginx's $document_uri, the decoded, normalised path; REQUEST_URI's path as the fallback.
  std::string_view path() const;
  // Reads the STDIN stream to its end: the GET and HEAD requests served here carry no body
  // worth keeping, and what is left unread on a kept connection would be read as the start of
  // the next request.
  void skip_stdin();
  // The answer and the records that end the request went out (write_response): the output
  // streams are marked closed, so that FCGX_Finish_r does not write the end records again.
  void mark_written();

 private:
  FCGX_Request request_{};
};

}  // namespace connector::fcgi
