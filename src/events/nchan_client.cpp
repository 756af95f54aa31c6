#include "events/nchan_client.h"

#include <curl/curl.h>

#include <mutex>

#include "events/nchan_info.h"
#include "events/publish_verdict.h"
#include "util/log.h"

namespace connector::events {
namespace {

// A publish's answer is a channel info too (events/nchan_info.h).
constexpr std::size_t kMaxAnswerBytes = kMaxChannelInfoBytes;

size_t collect(char* data, size_t size, size_t count, void* user) {
  auto* body = static_cast<std::string*>(user);
  const size_t bytes = size * count;
  if (body->size() + bytes > kMaxAnswerBytes) return 0;  // too much: curl fails the transfer
  body->append(data, bytes);
  return bytes;
}

CURL* handle(void* curl) { return static_cast<CURL*>(curl); }

// Only the characters of our channel names ("h:" and hex, "a:0x" and hex, commas) are sent.
std::string query_value(std::string_view text) {
  for (const char c : text) {
    const bool ok = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || c == ':' || c == ',';
    if (!ok) throw PublishRefused("not a channel name: " + std::string(text));
  }
  return std::string(text);
}

// Channels for one multi-channel publish (nchan_channel_id_split_delimiter ",").
std::string joined(const std::vector<std::string>& channels) {
  std::string list;
  for (const auto& channel : channels) list += (list.empty() ? "" : ",") + channel;
  return list;
}

}  // namespace

NchanClient::NchanClient(std::string socket_path, std::chrono::milliseconds timeout,
                         std::atomic<bool>& answers)
    : socket_path_(std::move(socket_path)), timeout_(timeout), answers_(answers) {
  static std::once_flag global;
  std::call_once(global, [] { curl_global_init(CURL_GLOBAL_NOTHING); });
  curl_ = curl_easy_init();
  if (curl_ == nullptr) throw std::runtime_error("curl_easy_init failed");
}

NchanClient::~NchanClient() { curl_easy_cleanup(handle(curl_)); }

NchanClient::Answer NchanClient::request(const std::string& target, const std::string* body) {
  CURL* curl = handle(curl_);
  curl_easy_reset(curl);
  Answer answer;
  const std::string url = "http://localhost" + target;
  curl_slist* headers = nullptr;
  // What nchan answers a long-poll with, as every JSON answer of the API.
  headers = curl_slist_append(headers, "Content-Type: application/json; charset=utf-8");
  headers = curl_slist_append(headers, "Accept: application/json");
  curl_easy_setopt(curl, CURLOPT_UNIX_SOCKET_PATH, socket_path_.c_str());
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(timeout_.count()));
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, collect);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &answer.body);
  if (body != nullptr) {
    curl_easy_setopt(curl, CURLOPT_POST, 1L);
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body->data());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE, static_cast<long>(body->size()));
  }
  const CURLcode code = curl_easy_perform(curl);
  curl_slist_free_all(headers);
  const bool answered = code == CURLE_OK;
  if (answers_.exchange(answered) != answered) {
    // A change either way, once: the worker hands subscribers over again, or stops.
    if (answered) {
      util::log_info("the events nginx answers again at " + socket_path_);
    } else {
      util::log_warning("the events nginx does not answer at " + socket_path_ + " (" +
                        curl_easy_strerror(code) + "): no subscriber is handed over until it does");
    }
  }
  if (code != CURLE_OK) {
    throw PublishError("nchan at " + socket_path_ + ": " + curl_easy_strerror(code));
  }
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &answer.status);
  return answer;
}

void NchanClient::publish(const std::string& location, const std::string& channels,
                          std::string_view body) {
  const std::string text(body);
  const auto answer = request(location + query_value(channels), &text);
  const std::string refusal =
      "nchan refused a message for " + channels + ": HTTP " + std::to_string(answer.status);
  switch (publish_verdict(answer.status)) {
    case PublishVerdict::kTaken:
      return;
    case PublishVerdict::kRefused:
      throw PublishRefused(refusal);
    case PublishVerdict::kRetry:
      throw PublishError(refusal);
  }
}

void NchanClient::publish_to_record(const std::string& channel, std::string_view body) {
  publish("/publish/record?channel=", channel, body);
}

void NchanClient::publish_initial_state(const std::string& channel, std::string_view body) {
  publish("/publish/snapshot?channel=", channel, body);
}

void NchanClient::publish_to_recent(const std::vector<std::string>& channels,
                                    std::string_view body) {
  publish("/publish/recent?channels=", joined(channels), body);
}

void NchanClient::publish_to_polls(const std::vector<std::string>& channels,
                                   std::string_view body) {
  publish("/publish/polls?channels=", joined(channels), body);
}

void NchanClient::publish_ping(std::string_view body) {
  publish("/publish/ping?channel=", "ping", body);
}

std::uint64_t NchanClient::record_messages(const std::string& channel) {
  const auto answer = request("/publish/record?channel=" + query_value(channel), nullptr);
  if (answer.status == 404) return 0;  // no such channel: nothing published, or it expired
  const auto messages = answer.status == 200 ? messages_in_channel_info(answer.body) : std::nullopt;
  if (!messages) {
    throw PublishError("nchan's channel info for " + channel + " is not understood (HTTP " +
                       std::to_string(answer.status) + ")");
  }
  return *messages;
}

}  // namespace connector::events
