#pragma once
// Sends deliveries, many at a time from one thread (libcurl's multi interface), at most one per
// subscription: a receiver that is slow or down holds only its own subscription's queue.
//
// What a receiver's side can do to us is bounded here:
// - only https (http only to an allow-listed host), no redirects (a 3xx is a failure, retried),
//   no proxy from the environment;
// - the address is screened when the connection is opened (CURLOPT_OPENSOCKETFUNCTION), on the
//   address being connected to, not on an earlier lookup: a name that resolves to loopback,
//   private, link-local or another special range (webhooks/address_policy.h) is refused unless
//   its host is allow-listed, and a DNS answer that changes between a check and the connect
//   (rebinding) cannot slip past, as there is no earlier check;
// - certificates verified (the system's CAs, or webhooks_ca_file);
// - a connect and a total timeout;
// - the answer's status line, headers and body together are read to at most kMaxAnswerBytes,
//   then the transfer stops (a 2xx status already read still acknowledges).
#include <curl/curl.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace connector::webhooks {

struct SenderSettings {
  std::string ca_file;  // empty: the system's
  std::chrono::milliseconds timeout{15000};
  std::chrono::milliseconds connect_timeout{3000};
};

struct Delivery {
  std::uint64_t subscription = 0;
  std::string url;
  bool allow_listed = false;         // http allowed, and any address
  std::vector<std::string> headers;  // "Name: value"
  std::string body;
};

struct DeliveryOutcome {
  std::uint64_t subscription = 0;
  bool acknowledged = false;  // a 2xx
  // The HTTP status ("200", "503"), or what went wrong: timeout, refused-address,
  // connect-failed, dns-failed, tls-failed, protocol-refused, answer-too-long, error-<curl code>
  // (and the deliverer's own not-sent, for one it could not start).
  std::string status;
  std::chrono::milliseconds took{0};
};

class HttpSender {
 public:
  static constexpr std::size_t kMaxAnswerBytes = 4096;

  explicit HttpSender(SenderSettings settings);
  ~HttpSender();
  HttpSender(const HttpSender&) = delete;
  HttpSender& operator=(const HttpSender&) = delete;

  // Starts it; the subscription must have none in flight.
  void start(Delivery delivery);
  // Drops the subscription's delivery in flight, if any (no outcome for it).
  void cancel(std::uint64_t subscription);
  bool busy(std::uint64_t subscription) const;
  std::size_t in_flight() const { return transfers_.size(); }
  // Moves the transfers on for up to `wait` (less when one ends) and returns those that ended.
  std::vector<DeliveryOutcome> run(std::chrono::milliseconds wait);

  struct Transfer;  // one delivery in flight: its easy handle and what it keeps alive

 private:
  std::unique_ptr<Transfer> make_transfer(Delivery delivery) const;

  SenderSettings settings_;
  CURLM* multi_;
  std::map<std::uint64_t, std::unique_ptr<Transfer>> transfers_;
};

}  // namespace connector::webhooks
