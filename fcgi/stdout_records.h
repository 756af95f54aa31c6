#pragma once
// A response written as FastCGI STDOUT records in one writev(). libfcgi's stream copies what it
// is given through an 8 KB buffer and writes every 8 KB separately: a 27 KB history page was 4
// system calls, each waking nginx (docs/BENCHMARKS.md, profile). Here the head and the body go
// out as records of up to 65,535 bytes each, straight from their buffers. FCGX_Finish_r still
// ends the request: it closes the (empty) stream, which sends the empty STDOUT record that ends
// the output, and then FCGI_END_REQUEST.
#include <string_view>

namespace connector::fcgi {

// Writes head then body on fd as STDOUT records of request_id. False when the connection
// failed or stayed blocked past its send timeout (SO_SNDTIMEO); the caller then ends the
// request as usual and libfcgi gives the connection up.
bool write_stdout(int fd, int request_id, std::string_view head, std::string_view body);

}  // namespace connector::fcgi
