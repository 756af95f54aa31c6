#pragma once
// Talks to nchan's publisher locations (nginx/connector-events-nginx.conf) over their private unix
// socket, with libcurl (a kept connection, timeouts, HTTP done right; nothing hand-written):
// publishes a message to a record's channel, or to several channels at once (a change's recent
// and address channels, its long-poll channels), and asks how many messages a channel holds.
// nginx on that socket is our own, but its answers are still only read for their status and
// one number.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace connector::events {

// Worth retrying: no answer, or a status events/publish_verdict.h says is not about the message.
class PublishError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The message refused for good (events/publish_verdict.h), or a channel name it cannot send:
// the same message would be refused again.
class PublishRefused : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class NchanClient {
 public:
  // `answers`: set after each request, to whether the events nginx answered it (any status).
  NchanClient(std::string socket_path, std::chrono::milliseconds timeout,
              std::atomic<bool>& answers);
  ~NchanClient();
  NchanClient(const NchanClient&) = delete;
  NchanClient& operator=(const NchanClient&) = delete;

  // Throws PublishRefused when nchan refuses it for good, PublishError when it does not take it
  // otherwise (no answer, or another status).
  void publish_to_record(const std::string& channel, std::string_view body);
  // A record's state on request, to its channel, kept a minute (not an hour: any client can
  // ask for one; events/initial_state_budget.h).
  void publish_initial_state(const std::string& channel, std::string_view body);
  // domain::recent_channels, one message to all of them.
  void publish_to_recent(const std::vector<std::string>& channels, std::string_view body);
  // The long-poll channels of a change (domain::poll_channels), one message to all of them.
  void publish_to_polls(const std::vector<std::string>& channels, std::string_view body);
  // The streams' keep-alive comment, to the "ping" channel every stream also reads.
  void publish_ping(std::string_view body);
  // The messages the record channel holds now (0 also when nchan has no such channel).
  std::uint64_t record_messages(const std::string& channel);

 private:
  struct Answer {
    long status = 0;
    std::string body;
  };
  Answer request(const std::string& target, const std::string* body);
  // `location` ends with its channel parameter's "=".
  void publish(const std::string& location, const std::string& channels, std::string_view body);

  std::string socket_path_;
  std::chrono::milliseconds timeout_;
  std::atomic<bool>& answers_;
  void* curl_;  // CURL*, kept between requests so its connection is reused
};

}  // namespace connector::events
