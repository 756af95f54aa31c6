#pragma once
// The enabled subscriptions the deliverer serves, as the database lists them (reloaded every
// second): each with its receiver, secret and queue, and an index from a recipient address to
// the subscriptions that follow it. A subscription that appears is added with the cursor the
// database holds; one that disappears (disabled, removed) is dropped; an operator's replay
// (webhook_queues.replay_from_seq) restarts its queue from there.
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "db/webhook_store.h"
#include "domain/history.h"
#include "webhooks/subscription_queue.h"

namespace connector::webhooks {

struct Subscription {
  Subscription(std::uint64_t id_, const StoredQueueState& stored) : id(id_), queue(stored) {}

  std::uint64_t id;
  std::string url;
  std::string host;  // the receiver's, as libcurl reads it from the URL
  bool allow_listed = false;
  std::uint64_t statuses = 0;  // bit 1 << HistoryStatus
  std::string secret;
  std::uint64_t lost_before_seq = 0;
  std::uint64_t delivered = 0;  // as stored, plus what this deliverer stored since
  std::uint64_t retried = 0;
  SubscriptionQueue queue;
  // Not stored yet: counts since the last store, the last attempt, a replay applied.
  std::uint64_t delivered_unstored = 0;
  std::uint64_t retried_unstored = 0;
  std::string last_status;
  std::int64_t last_attempt_us = 0;
  std::uint64_t replay_applied = 0;
  std::uint64_t stored_acked = 0;  // the cursor the database holds
  bool dirty = false;              // an attempt since the last store

  bool wants(const domain::HistoryRecord& record) const {
    return (statuses >> static_cast<unsigned>(record.status) & 1U) != 0;
  }
};

class SubscriptionSet {
 public:
  using LoadAddresses = std::function<std::vector<std::string>(std::uint64_t subscription)>;

  // allow_hosts: webhooks_allow_hosts, split (in any case).
  explicit SubscriptionSet(std::vector<std::string> allow_hosts);

  // Brings the set to `rows`. Returns the ids whose queue was dropped (removed, disabled,
  // replayed, or a receiver URL refused), whose deliveries in flight must be cancelled.
  std::vector<std::uint64_t> sync(const std::vector<db::WebhookSubscriptionRow>& rows,
                                  const LoadAddresses& load_addresses);
  void clear();

  // The subscriptions that follow this record's recipient and want its status.
  std::vector<Subscription*> matching(const domain::HistoryRecord& record);
  bool follows(const Subscription& s, const domain::HistoryRecord& record) const;
  Subscription* find(std::uint64_t id);
  std::map<std::uint64_t, Subscription>& all() { return subscriptions_; }

 private:
  void add(const db::WebhookSubscriptionRow& row, const LoadAddresses& load_addresses);
  void drop(std::uint64_t id);

  std::vector<std::string> allow_hosts_;
  std::map<std::uint64_t, Subscription> subscriptions_;
  std::set<std::uint64_t> refused_;  // ids whose URL this configuration refuses
  std::unordered_map<std::string, std::vector<std::uint64_t>> by_address_;
};

}  // namespace connector::webhooks
