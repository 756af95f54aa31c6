// fcgi::write_response: a response as FastCGI records, read back from a socket pair.
#define BOOST_TEST_MODULE stdout_records
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <boost/test/unit_test.hpp>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "stdout_records.h"

namespace {

constexpr std::chrono::milliseconds kTimeout{10000};

struct Record {
  int version, type, request_id;
  std::string content;
};

// The two records that end every response: an empty STDOUT record, then FCGI_END_REQUEST
// (application status 0, FCGI_REQUEST_COMPLETE). Checked and removed; the STDOUT records before
// them are returned.
std::vector<Record> without_end(std::vector<Record> records, int request_id) {
  BOOST_TEST_REQUIRE(records.size() >= 2u);
  const Record end = records.back();
  records.pop_back();
  const Record empty = records.back();
  records.pop_back();
  BOOST_TEST((empty.version == 1 && empty.type == 6 && empty.request_id == request_id));
  BOOST_TEST(empty.content.empty());
  BOOST_TEST((end.version == 1 && end.type == 3 && end.request_id == request_id));
  BOOST_TEST(end.content == std::string(8, '\0'));
  return records;
}

// Everything written on fd[0] until it is closed, read on fd[1], cut into records.
std::vector<Record> written(std::string_view head, std::string_view body, int request_id) {
  int fd[2];
  BOOST_TEST_REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM, 0, fd) == 0);
  connector::fcgi::set_send_timeout(fd[0], kTimeout);
  bool ok = false;
  std::thread writer([&] {
    ok = connector::fcgi::write_response(fd[0], request_id, head, body, kTimeout);
    ::close(fd[0]);
  });
  std::string bytes;
  char buffer[4096];
  for (ssize_t n; (n = ::read(fd[1], buffer, sizeof buffer)) > 0;) bytes.append(buffer, n);
  writer.join();
  ::close(fd[1]);
  BOOST_TEST(ok);
  std::vector<Record> records;
  std::size_t at = 0;
  while (at + 8 <= bytes.size()) {
    const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(bytes[at + i]); };
    const std::size_t length = byte(4) << 8 | byte(5);
    BOOST_TEST_REQUIRE(at + 8 + length + byte(6) <= bytes.size());
    records.push_back({byte(0), byte(1), byte(2) << 8 | byte(3), bytes.substr(at + 8, length)});
    at += 8 + length + byte(6);
  }
  BOOST_TEST(at == bytes.size());
  return records;
}

}  // namespace

BOOST_AUTO_TEST_CASE(head_and_a_large_body_arrive_whole_in_records_of_at_most_65535_bytes) {
  const std::string head = "Status: 200 OK\r\nContent-Length: 150000\r\n\r\n";
  std::string body(150000, '\0');
  for (std::size_t i = 0; i < body.size(); ++i) body[i] = static_cast<char>('a' + i % 26);
  const auto records = without_end(written(head, body, 258), 258);
  BOOST_TEST_REQUIRE(records.size() == 4u);  // the head, then 65535 + 65535 + 18930
  std::string content;
  for (const auto& r : records) {
    BOOST_TEST(r.version == 1);
    BOOST_TEST(r.type == 6);  // FCGI_STDOUT
    BOOST_TEST(r.request_id == 258);
    BOOST_TEST(!r.content.empty());  // an empty one would end the stream early
    BOOST_TEST(r.content.size() <= 65535u);
    content += r.content;
  }
  BOOST_TEST(records[0].content == head);
  BOOST_TEST(content == head + body);
}

BOOST_AUTO_TEST_CASE(an_empty_body_sends_the_head_alone) {
  const auto records = without_end(written("Status: 304 Not Modified\r\n\r\n", "", 1), 1);
  BOOST_TEST_REQUIRE(records.size() == 1u);
  BOOST_TEST(records[0].content == "Status: 304 Not Modified\r\n\r\n");
}

BOOST_AUTO_TEST_CASE(a_closed_connection_is_reported) {
  int fd[2];
  BOOST_TEST_REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM, 0, fd) == 0);
  ::close(fd[1]);
  ::signal(SIGPIPE, SIG_IGN);
  BOOST_TEST(!connector::fcgi::write_response(fd[0], 1, "Status: 200 OK\r\n\r\n", "x", kTimeout));
  ::close(fd[0]);
}

// A peer that takes the answer a few bytes at a time, never stalling a single write for long:
// the answer's one deadline still ends the write (a timeout per system call never would).
BOOST_AUTO_TEST_CASE(a_peer_that_reads_a_trickle_cannot_hold_the_write_past_its_deadline) {
  int fd[2];
  BOOST_TEST_REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM, 0, fd) == 0);
  const int small = 4096;
  ::setsockopt(fd[0], SOL_SOCKET, SO_SNDBUF, &small, sizeof small);
  ::setsockopt(fd[1], SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
  std::atomic<bool> done{false};
  std::thread trickle([&] {
    char buffer[64];
    while (!done && ::read(fd[1], buffer, sizeof buffer) > 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  });
  const std::string body(4 * 1024 * 1024, 'x');  // 64 bytes per 20 ms: about 20 minutes
  connector::fcgi::set_send_timeout(fd[0], std::chrono::milliseconds(300));  // as at accept
  const auto started = std::chrono::steady_clock::now();
  const bool ok = connector::fcgi::write_response(fd[0], 1, "Status: 200 OK\r\n\r\n", body,
                                                  std::chrono::milliseconds(300));
  const auto took = std::chrono::steady_clock::now() - started;
  done = true;
  ::shutdown(fd[0], SHUT_RDWR);
  trickle.join();
  ::close(fd[0]);
  ::close(fd[1]);
  BOOST_TEST(!ok);
  // A guard against a hang, not a benchmark: the write ends near its deadline, not after the
  // minutes the whole body would take.
  BOOST_TEST(took < std::chrono::seconds(30));
}
