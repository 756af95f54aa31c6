#include "stdout_records.h"

#include <sys/socket.h>
#include <sys/uio.h>

#include <algorithm>
#include <array>
#include <boost/container/small_vector.hpp>
#include <cerrno>
#include <cstdint>

#include "fastcgi/fcgi_record.h"

namespace connector::fcgi {
namespace {

using fastcgi::fcgi_record::kEndRequest;
using fastcgi::fcgi_record::kMaxContentBytes;
using fastcgi::fcgi_record::kStdout;
using fastcgi::fcgi_record::kVersion;

using Header = std::array<unsigned char, fastcgi::fcgi_record::kHeaderBytes>;
// In place up to an answer of about 260 KB (more than a page of 100 records): no
// allocation per answer.
constexpr std::size_t kInPlaceRecords = 8;
using Iovecs = boost::container::small_vector<iovec, 2 * kInPlaceRecords + 1>;

Header header(unsigned char type, int request_id, std::size_t length) {
  return {kVersion,
          type,
          static_cast<unsigned char>((request_id >> 8) & 0xFF),
          static_cast<unsigned char>(request_id & 0xFF),
          static_cast<unsigned char>((length >> 8) & 0xFF),
          static_cast<unsigned char>(length & 0xFF),
          0,   // no padding
          0};  // reserved
}

// Writes every byte of iov within `timeout`, resuming after partial writes. A writev blocks
// at most SO_SNDTIMEO: the first one `timeout` (set at accept), each later one only what is
// left of it, so the deadline holds for the whole answer, not per system call. Answers that fit
// the socket's buffer, nearly all, go out in one writev and no setsockopt.
bool write_all(int fd, Iovecs& iov, std::chrono::milliseconds timeout) {
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + timeout;
  bool shortened = false;
  bool complete = true;
  std::size_t first = 0;
  while (first < iov.size()) {
    const ssize_t written = ::writev(fd, iov.data() + first, static_cast<int>(iov.size() - first));
    if (written < 0) {
      if (errno == EINTR) continue;
      complete = false;
      break;
    }
    auto left = static_cast<std::size_t>(written);
    while (first < iov.size() && left >= iov[first].iov_len) left -= iov[first++].iov_len;
    if (left > 0) {
      iov[first].iov_base = static_cast<char*>(iov[first].iov_base) + left;
      iov[first].iov_len -= left;
    }
    if (first == iov.size()) break;
    const auto remaining =
        std::chrono::duration_cast<std::chrono::microseconds>(deadline - Clock::now());
    if (remaining < std::chrono::milliseconds(1)) {
      complete = false;
      break;
    }
    set_send_timeout(fd, remaining);
    shortened = true;
  }
  if (shortened) set_send_timeout(fd, timeout);  // a kept connection's next answer starts afresh
  return complete;
}

}  // namespace

namespace {

void set_timeout(int fd, int option, std::chrono::microseconds timeout) {
  timeout = std::max(timeout, std::chrono::microseconds(1000));
  const timeval tv{static_cast<time_t>(timeout.count() / 1000000),
                   static_cast<suseconds_t>(timeout.count() % 1000000)};
  ::setsockopt(fd, SOL_SOCKET, option, &tv, sizeof tv);
}

}  // namespace

void set_send_timeout(int fd, std::chrono::microseconds timeout) {
  set_timeout(fd, SO_SNDTIMEO, timeout);
}

void set_receive_timeout(int fd, std::chrono::microseconds timeout) {
  set_timeout(fd, SO_RCVTIMEO, timeout);
}

bool write_response(int fd, int request_id, std::string_view head, std::string_view body,
                    std::chrono::milliseconds timeout) {
  // The end of the request: an empty STDOUT record, then FCGI_END_REQUEST with its 8-byte body
  // (application status 0, protocol status FCGI_REQUEST_COMPLETE, 3 reserved bytes).
  static constexpr std::array<unsigned char, 8> kEndBody{};
  boost::container::small_vector<Header, kInPlaceRecords> headers;
  headers.reserve(4 + (head.size() + body.size()) / kMaxContentBytes);
  Iovecs iov;
  iov.reserve(2 * headers.capacity());
  // Headers first (their addresses must not move once taken), then the iovecs.
  boost::container::small_vector<std::string_view, kInPlaceRecords> contents;
  for (std::string_view part : {head, body}) {
    while (!part.empty()) {
      const std::size_t length = std::min(part.size(), kMaxContentBytes);
      headers.push_back(header(kStdout, request_id, length));
      contents.push_back(part.substr(0, length));
      part.remove_prefix(length);
    }
  }
  headers.push_back(header(kStdout, request_id, 0));
  headers.push_back(header(kEndRequest, request_id, kEndBody.size()));
  for (std::size_t i = 0; i < contents.size(); ++i) {
    iov.push_back({headers[i].data(), headers[i].size()});
    iov.push_back({const_cast<char*>(contents[i].data()), contents[i].size()});
  }
  iov.push_back({headers[contents.size()].data(), headers[contents.size()].size()});
  iov.push_back({headers[contents.size() + 1].data(), headers[contents.size() + 1].size()});
  iov.push_back({const_cast<unsigned char*>(kEndBody.data()), kEndBody.size()});
  return write_all(fd, iov, timeout);
}

}  // namespace connector::fcgi
