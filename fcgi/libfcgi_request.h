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

  // The CGI variables the worker reads; each a null string_view when absent (the first when
  // sent twice). Valid until FCGX_Finish_r.
  struct Params {
    std::string_view method, document_uri, request_uri, query_string, request_id;
    std::string_view if_none_match, last_event_id, if_modified_since, accept, upgrade;
    // nginx's $document_uri, the decoded, normalised path; REQUEST_URI's path as the fallback.
    std::string_view path() const;
  };

  FCGX_Request& get() { return request_; }
  // Found in one pass over the request's variables: libfcgi's FCGX_GetParam scans them all
  // for each name (for nothing when a header is absent), some 5,000 instructions per answer
  // for ten names (docs/BENCHMARKS.md, issue 35).
  Params params() const;
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
