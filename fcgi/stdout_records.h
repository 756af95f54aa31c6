#pragma once
// A whole response written as FastCGI records in one writev(). libfcgi's stream copies what it
// is given through an 8 KB buffer and writes every 8 KB separately: a 27 KB history page was 4
// system calls, each waking nginx (docs/BENCHMARKS.md, profile), and its FCGX_Finish_r then
// wrote the end of the request in one more. Here the head and the body go out as STDOUT records
// of up to 65,535 bytes each, straight from their buffers, followed by the empty STDOUT record
// that ends the output and FCGI_END_REQUEST (request complete, status 0): nginx wakes once.
#include <chrono>
#include <string_view>

namespace connector::fcgi {

// A blocking write on fd gives up after `timeout` (SO_SNDTIMEO; at least 1 ms, as 0 would
// mean never).
void set_send_timeout(int fd, std::chrono::microseconds timeout);
// A blocking read on fd gives up after `timeout` (SO_RCVTIMEO; at least 1 ms): a bound per read.
void set_receive_timeout(int fd, std::chrono::microseconds timeout);

// Writes head then body on fd as STDOUT records of request_id, then the records that end the
// request, all within `timeout`: a peer that takes the answer a few bytes at a time cannot hold
// the thread longer. fd's SO_SNDTIMEO must be `timeout` (set_send_timeout at accept), and is
// left so. False when the connection failed or the time ran out: the caller then closes it.
bool write_response(int fd, int request_id, std::string_view head, std::string_view body,
                    std::chrono::milliseconds timeout);

}  // namespace connector::fcgi
