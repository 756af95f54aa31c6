#include "webhooks/subscription_set.h"

#include <algorithm>
#include <cctype>
#include <variant>

#include "util/log.h"
#include "webhooks/receiver_url.h"

namespace connector::webhooks {
namespace {

std::string lowercase(std::string text) {
  for (auto& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

StoredQueueState stored_state(const db::WebhookSubscriptionRow& row) {
  StoredQueueState state;
  state.acked_seq = row.acked_seq;
  state.attempt = static_cast<std::uint32_t>(row.attempt);
  if (row.retrying_since_us != 0) state.retrying_since_us = row.retrying_since_us;
  if (row.failing_since_us != 0) state.failing_since_us = row.failing_since_us;
  return state;
}

}  // namespace

// In lower case, as parse_receiver_url compares them and writes a URL's host (allow_listed).
SubscriptionSet::SubscriptionSet(std::vector<std::string> allow_hosts)
    : allow_hosts_(std::move(allow_hosts)) {
  for (auto& host : allow_hosts_) host = lowercase(host);
}

std::vector<std::uint64_t> SubscriptionSet::sync(
    const std::vector<db::WebhookSubscriptionRow>& rows, const LoadAddresses& load_addresses) {
  std::vector<std::uint64_t> dropped;
  for (auto it = subscriptions_.begin(); it != subscriptions_.end();) {
    const std::uint64_t id = it->first;
    ++it;
    const bool listed =
        std::any_of(rows.begin(), rows.end(), [&](const auto& row) { return row.id == id; });
    if (!listed) {
      drop(id);
      dropped.push_back(id);
    }
  }
  for (const auto& row : rows) {
    auto* known = find(row.id);
    if (known == nullptr) {
      add(row, load_addresses);
      continue;
    }
    known->lost_before_seq = row.lost_before_seq;
    if (row.replay_from_seq != 0 && row.replay_from_seq != known->replay_applied) {
      known->queue.replay_from(row.replay_from_seq);
      known->replay_applied = row.replay_from_seq;
      known->dirty = true;
      dropped.push_back(row.id);
      util::log_info("webhook subscription=" + std::to_string(row.id) + " replays from change " +
                     std::to_string(row.replay_from_seq));
    }
  }
  return dropped;
}

void SubscriptionSet::add(const db::WebhookSubscriptionRow& row,
                          const LoadAddresses& load_addresses) {
  if (refused_.contains(row.id)) return;
  const auto url = parse_receiver_url(row.url, allow_hosts_);
  if (const auto* refused = std::get_if<UrlRefused>(&url)) {
    // Stored under a looser configuration (webhooks_allow_hosts is read at start): not sent
    // to, and said once, not at every reload.
    refused_.insert(row.id);
    util::log_warning("webhook subscription=" + std::to_string(row.id) +
                      " is not delivered: its URL is refused (" + refused->reason + ")");
    return;
  }
  const auto& receiver = std::get<ReceiverUrl>(url);
  Subscription s(row.id, stored_state(row));
  s.url = receiver.url;
  s.host = receiver.host;
  s.allow_listed =
      std::find(allow_hosts_.begin(), allow_hosts_.end(), receiver.host) != allow_hosts_.end();
  s.statuses = row.statuses;
  s.secret = row.secret;
  s.lost_before_seq = row.lost_before_seq;
  s.delivered = row.delivered;
  s.retried = row.retried;
  s.stored_acked = row.acked_seq;
  if (row.replay_from_seq != 0) {
    s.queue.replay_from(row.replay_from_seq);
    s.replay_applied = row.replay_from_seq;
    s.dirty = true;
  }
  for (const auto& address : load_addresses(row.id))
    by_address_[lowercase(address)].push_back(row.id);
  subscriptions_.emplace(row.id, std::move(s));
}

void SubscriptionSet::drop(std::uint64_t id) {
  subscriptions_.erase(id);
  for (auto it = by_address_.begin(); it != by_address_.end();) {
    auto& ids = it->second;
    ids.erase(std::remove(ids.begin(), ids.end(), id), ids.end());
    it = ids.empty() ? by_address_.erase(it) : std::next(it);
  }
}

void SubscriptionSet::clear() {
  subscriptions_.clear();
  by_address_.clear();
}

std::vector<Subscription*> SubscriptionSet::matching(const domain::HistoryRecord& record) {
  std::vector<Subscription*> out;
  const auto found = by_address_.find(lowercase(record.destination_address));
  if (found == by_address_.end()) return out;
  for (const std::uint64_t id : found->second) {
    auto* s = find(id);
    if (s != nullptr && s->wants(record)) out.push_back(s);
  }
  return out;
}

bool SubscriptionSet::follows(const Subscription& s, const domain::HistoryRecord& record) const {
  const auto found = by_address_.find(lowercase(record.destination_address));
  return found != by_address_.end() && s.wants(record) &&
         std::find(found->second.begin(), found->second.end(), s.id) != found->second.end();
}

Subscription* SubscriptionSet::find(std::uint64_t id) {
  const auto found = subscriptions_.find(id);
  return found == subscriptions_.end() ? nullptr : &found->second;
}

}  // namespace connector::webhooks
