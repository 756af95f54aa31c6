#include "webhooks/http_sender.h"

#include <arpa/inet.h>
#include <sys/socket.h>

#include <cstring>
#include <stdexcept>
#include <utility>

#include "webhooks/address_policy.h"

namespace connector::webhooks {

struct HttpSender::Transfer {
  Delivery delivery;
  CURL* easy = nullptr;
  curl_slist* headers = nullptr;
  std::size_t answer_bytes = 0;
  bool answer_too_long = false;
  std::string refused;  // why the address was refused, when it was
  std::chrono::steady_clock::time_point started;

  Transfer() = default;
  Transfer(const Transfer&) = delete;
  Transfer& operator=(const Transfer&) = delete;
  ~Transfer() {
    if (easy != nullptr) curl_easy_cleanup(easy);
    curl_slist_free_all(headers);
  }
};

namespace {

using Transfer = HttpSender::Transfer;

// Counts what the receiver sends; past the cap, 0 stops the transfer.
std::size_t take_answer(Transfer& t, std::size_t bytes) {
  if (t.answer_bytes + bytes > HttpSender::kMaxAnswerBytes) {
    t.answer_too_long = true;
    return 0;
  }
  t.answer_bytes += bytes;
  return bytes;
}

std::size_t on_body(char*, std::size_t size, std::size_t count, void* user) {
  return take_answer(*static_cast<Transfer*>(user), size * count);
}

std::size_t on_header(char*, std::size_t size, std::size_t count, void* user) {
  return take_answer(*static_cast<Transfer*>(user), size * count);
}

// The address being connected to, screened (see the header): the check and the connection
// are one step.
curl_socket_t open_socket(void* user, curlsocktype purpose, curl_sockaddr* address) {
  auto& t = *static_cast<Transfer*>(user);
  if (purpose == CURLSOCKTYPE_IPCXN && !t.delivery.allow_listed) {
    AddressKind kind = AddressKind::kUnspecified;
    if (address->family == AF_INET) {
      sockaddr_in in{};
      std::memcpy(&in, &address->addr, sizeof in);
      kind = classify(in.sin_addr);
    } else if (address->family == AF_INET6) {
      sockaddr_in6 in6{};
      std::memcpy(&in6, &address->addr, sizeof in6);
      kind = classify(in6.sin6_addr);
    }
    if (kind != AddressKind::kPublic) {
      t.refused = describe(kind);
      return CURL_SOCKET_BAD;
    }
  }
  return ::socket(address->family, address->socktype | SOCK_CLOEXEC, address->protocol);
}

std::string failure_word(CURLcode code, const Transfer& t) {
  if (!t.refused.empty()) return "refused-address";
  switch (code) {
    case CURLE_OPERATION_TIMEDOUT:
      return "timeout";
    case CURLE_COULDNT_CONNECT:
      return "connect-failed";
    case CURLE_COULDNT_RESOLVE_HOST:
      return "dns-failed";
    case CURLE_UNSUPPORTED_PROTOCOL:
      return "protocol-refused";
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_CERTPROBLEM:
      return "tls-failed";
    default:
      return "error-" + std::to_string(static_cast<int>(code));
  }
}

template <typename T>
void set(CURL* easy, CURLoption option, T value) {
  if (curl_easy_setopt(easy, option, value) != CURLE_OK) {
    throw std::runtime_error("libcurl refused option " + std::to_string(option));
  }
}

}  // namespace

HttpSender::HttpSender(SenderSettings settings)
    : settings_(std::move(settings)), multi_(curl_multi_init()) {
  if (multi_ == nullptr) throw std::runtime_error("curl_multi_init failed");
}

HttpSender::~HttpSender() {
  for (auto& [id, transfer] : transfers_) curl_multi_remove_handle(multi_, transfer->easy);
  transfers_.clear();
  curl_multi_cleanup(multi_);
}

std::unique_ptr<Transfer> HttpSender::make_transfer(Delivery delivery) const {
  auto t = std::make_unique<Transfer>();
  t->delivery = std::move(delivery);
  t->easy = curl_easy_init();
  if (t->easy == nullptr) throw std::runtime_error("curl_easy_init failed");
  for (const auto& header : t->delivery.headers) {
    t->headers = curl_slist_append(t->headers, header.c_str());
  }
  t->headers = curl_slist_append(t->headers, "Expect:");  // no 100-continue round trip
  CURL* e = t->easy;
  set(e, CURLOPT_URL, t->delivery.url.c_str());
  set(e, CURLOPT_PROTOCOLS_STR, t->delivery.allow_listed ? "http,https" : "https");
  set(e, CURLOPT_FOLLOWLOCATION, 0L);
  set(e, CURLOPT_PROXY, "");  // never a proxy from the environment: the screen is on the receiver
  set(e, CURLOPT_NOSIGNAL, 1L);
  // A resolver thread that does not answer is left behind rather than joined: one receiver's
  // name servers never stall the deliverer's one thread (and with it every other delivery).
  set(e, CURLOPT_QUICK_EXIT, 1L);
  set(e, CURLOPT_POST, 1L);
  set(e, CURLOPT_POSTFIELDS, t->delivery.body.c_str());
  set(e, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(t->delivery.body.size()));
  set(e, CURLOPT_HTTPHEADER, t->headers);
  set(e, CURLOPT_USERAGENT, "unit-connector-webhooks/1");
  set(e, CURLOPT_TIMEOUT_MS, static_cast<long>(settings_.timeout.count()));
  set(e, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(settings_.connect_timeout.count()));
  set(e, CURLOPT_SSL_VERIFYPEER, 1L);
  set(e, CURLOPT_SSL_VERIFYHOST, 2L);
  if (!settings_.ca_file.empty()) set(e, CURLOPT_CAINFO, settings_.ca_file.c_str());
  set(e, CURLOPT_OPENSOCKETFUNCTION, open_socket);
  set(e, CURLOPT_OPENSOCKETDATA, t.get());
  set(e, CURLOPT_WRITEFUNCTION, on_body);
  set(e, CURLOPT_WRITEDATA, t.get());
  set(e, CURLOPT_HEADERFUNCTION, on_header);
  set(e, CURLOPT_HEADERDATA, t.get());
  set(e, CURLOPT_PRIVATE, t.get());
  return t;
}

void HttpSender::start(Delivery delivery) {
  const std::uint64_t id = delivery.subscription;
  if (busy(id)) throw std::logic_error("a delivery is in flight for this subscription");
  auto t = make_transfer(std::move(delivery));
  t->started = std::chrono::steady_clock::now();
  if (curl_multi_add_handle(multi_, t->easy) != CURLM_OK) {
    throw std::runtime_error("curl_multi_add_handle failed");
  }
  transfers_.emplace(id, std::move(t));
}

void HttpSender::cancel(std::uint64_t subscription) {
  const auto found = transfers_.find(subscription);
  if (found == transfers_.end()) return;
  curl_multi_remove_handle(multi_, found->second->easy);
  transfers_.erase(found);
}

bool HttpSender::busy(std::uint64_t subscription) const {
  return transfers_.contains(subscription);
}

std::vector<DeliveryOutcome> HttpSender::run(std::chrono::milliseconds wait) {
  int running = 0;
  curl_multi_perform(multi_, &running);
  // Waits the whole time when nothing is in flight (curl_multi_poll, unlike curl_multi_wait).
  if (wait.count() > 0) {
    curl_multi_poll(multi_, nullptr, 0, static_cast<int>(wait.count()), nullptr);
    curl_multi_perform(multi_, &running);
  }
  std::vector<DeliveryOutcome> ended;
  int queued = 0;
  while (CURLMsg* message = curl_multi_info_read(multi_, &queued)) {
    if (message->msg != CURLMSG_DONE) continue;
    Transfer* t = nullptr;
    curl_easy_getinfo(message->easy_handle, CURLINFO_PRIVATE, &t);
    long code = 0;
    curl_easy_getinfo(message->easy_handle, CURLINFO_RESPONSE_CODE, &code);
    const CURLcode result = message->data.result;
    DeliveryOutcome outcome;
    outcome.subscription = t->delivery.subscription;
    outcome.took = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - t->started);
    // A 2xx whose answer ran past the cap was still given: it acknowledges.
    const bool answered = result == CURLE_OK || (result == CURLE_WRITE_ERROR && t->answer_too_long);
    if (answered && code > 0) {
      outcome.status = std::to_string(code);
      outcome.acknowledged = code >= 200 && code < 300;
    } else {
      outcome.status = t->answer_too_long ? "answer-too-long" : failure_word(result, *t);
    }
    ended.push_back(std::move(outcome));
    cancel(t->delivery.subscription);
  }
  return ended;
}

}  // namespace connector::webhooks
