#include "admin/webhook_commands.h"

#include <fstream>
#include <iostream>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

#include "admin/admin_database.h"
#include "admin/webhook_input.h"
#include "admin/webhook_list.h"
#include "db/webhook_subscriptions.h"
#include "webhooks/receiver_url.h"
#include "webhooks/signature.h"

namespace connector::admin {
namespace {

// A value refused by a pure check: wrong usage, named by its option.
template <typename Parse>
auto usage_checked(std::string_view option, Parse&& parse) -> decltype(parse()) {
  try {
    return parse();
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string(option) + ": " + e.what());
  }
}

// The file whole, refused past `limit` bytes without reading further.
std::string read_bounded(const std::string& path, std::size_t limit) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw std::runtime_error("cannot read " + path);
  std::string text(limit + 1, '\0');
  file.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (file.bad()) throw std::runtime_error("cannot read " + path);
  text.resize(static_cast<std::size_t>(file.gcount()));
  if (text.size() > limit) {
    throw std::runtime_error(path + " is larger than " + std::to_string(limit >> 20) +
                             " MiB, the most an --addresses file may be");
  }
  return text;
}

std::vector<std::string> addresses_of(const Invocation& call) {
  const std::string* file = call.option("--addresses");
  const auto recipients = call.values("--recipient");
  if (file != nullptr && !recipients.empty()) {
    throw UsageError("--addresses and --recipient exclude each other");
  }
  if (file == nullptr && recipients.empty()) {
    throw UsageError("needs --addresses FILE or --recipient ADDR");
  }
  if (file == nullptr)
    return usage_checked("--recipient", [&] { return parse_recipients(recipients); });
  const std::string text = read_bounded(*file, kMaxAddressFileBytes);
  try {
    return parse_address_file(text);
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error(*file + ", " + e.what() + "; nothing written");
  }
}

std::uint64_t id_of(const Invocation& call) { return parse_count(call.positional[0], "ID"); }

int add_command(const Invocation& call) {
  const std::string* url_text = call.option("--url");
  if (url_text == nullptr) throw UsageError("needs --url URL");
  const std::string* statuses_text = call.option("--statuses");
  const std::string statuses =
      statuses_text == nullptr
          ? all_statuses()
          : usage_checked("--statuses", [&] { return parse_statuses(*statuses_text); });
  auto addresses = addresses_of(call);
  const auto config = call.config();
  const auto url =
      webhooks::parse_receiver_url(*url_text, webhooks::allowed_hosts(config.webhooks.allow_hosts));
  if (const auto* refused = std::get_if<webhooks::UrlRefused>(&url)) {
    throw UsageError("--url refused: " + refused->reason);
  }
  db::NewSubscription subscription{std::get<webhooks::ReceiverUrl>(url).url, statuses,
                                   std::move(addresses), webhooks::new_secret()};
  if (subscription.secret.empty()) {
    throw std::runtime_error("OpenSSL's random generator gave no secret; nothing written");
  }
  auto database = admin_database(config);
  const auto added = db::add_subscription(database, config.db.name, subscription);
  std::cout << "subscription " << added.id << " added: " << subscription.url << ", "
            << subscription.addresses.size()
            << (subscription.addresses.size() == 1 ? " address" : " addresses") << ", statuses "
            << subscription.statuses << ", the changes after seq " << added.acked_seq << "\n"
            << "secret " << subscription.secret << "\n"
            << "This secret is not shown again: give it to the receiver now (it checks every "
               "delivery's Connector-Signature with it).\n";
  return 0;
}

int list_command(const Invocation& call) {
  auto database = admin_database(call.config());
  std::cout << format_subscription_list(db::list_subscriptions(database));
  return 0;
}

int set_enabled(const Invocation& call, bool enabled) {
  const auto id = id_of(call);
  auto database = admin_database(call.config());
  const char* state = enabled ? "enabled" : "disabled";
  switch (db::set_enabled(database, id, enabled)) {
    case db::Change::kNotFound:
      throw std::runtime_error("no subscription " + std::to_string(id));
    case db::Change::kAlready:
      std::cout << "subscription " << id << " was already " << state << "\n";
      break;
    case db::Change::kDone:
      std::cout << "subscription " << id << " " << state << "\n";
      break;
  }
  return 0;
}

int disable_command(const Invocation& call) { return set_enabled(call, false); }
int enable_command(const Invocation& call) { return set_enabled(call, true); }

int remove_command(const Invocation& call) {
  const auto id = id_of(call);
  const auto config = call.config();
  auto database = admin_database(config);
  if (db::remove_subscription(database, config.db.name, id) == db::Change::kNotFound) {
    throw std::runtime_error("no subscription " + std::to_string(id));
  }
  std::cout << "subscription " << id << " removed, with its addresses, queue and secret\n";
  return 0;
}

int replay_command(const Invocation& call) {
  using Outcome = db::ReplayRequest::Outcome;
  const auto id = id_of(call);
  const std::string* since_text = call.option("--since");
  if (since_text == nullptr) throw UsageError("needs --since SEQ");
  const auto since = parse_count(*since_text, "--since");
  if (since == 0) throw UsageError("--since must be at least 1");
  auto database = admin_database(call.config());
  const auto request = db::request_replay(database, id, since);
  const auto seq = [](std::uint64_t value) { return "seq " + std::to_string(value); };
  switch (request.outcome) {
    case Outcome::kNotFound:
      throw std::runtime_error("no subscription " + std::to_string(id));
    case Outcome::kFeedEmpty:
      throw std::runtime_error("the change feed is empty: there is nothing to replay");
    case Outcome::kBeforeFeed:
      throw std::runtime_error(seq(since) +
                               " is no longer in the change feed: its oldest change "
                               "is " +
                               seq(request.feed_start));
    case Outcome::kAfterFeed:
      throw std::runtime_error(seq(since) + " is past the newest change of the feed, " +
                               seq(request.feed_end));
    case Outcome::kAheadOfCursor:
      throw std::runtime_error(seq(since) + " is ahead of the subscription's cursor, " +
                               seq(request.acked_seq) +
                               ": a replay goes back (forward, it would skip changes not sent)");
    case Outcome::kRequested:
      break;
  }
  std::cout << "subscription " << id << ": the changes it follows from " << seq(since)
            << " on are sent again (the deliverer starts at its next round); lost_before_seq "
               "cleared\n";
  return 0;
}

constexpr std::string_view kAddOptions[] = {"--url", "--addresses", "--statuses"};
constexpr std::string_view kAddRepeatable[] = {"--recipient"};
constexpr std::string_view kReplayOptions[] = {"--since"};

constexpr Command kSubcommands[] = {
    {"add",
     "[--config FILE] webhook add --url URL (--addresses FILE | --recipient ADDR "
     "[--recipient ADDR ...]) [--statuses LIST]",
     "Adds a subscription; it is sent the changes from now on. URL: https, or http to a host\n"
     "of the config's webhooks_allow_hosts; printable ASCII; no user name, password or\n"
     "fragment. The recipients it follows (history's destination_address): FILE, one\n"
     "address a line (0x and 40 hex digits; blank lines and # comments ignored; at most\n"
     "100,000 addresses and 8 MiB), or a --recipient per address. LIST: the record states\n"
     "sent, from Deposit, Pending, Confirmed, Error, comma-separated (default: all four).\n"
     "Prints the subscription's id, then its secret (whsec_ and 64 hex digits), with which\n"
     "the receiver checks every delivery's signature: it is shown this once only.",
     kAddOptions, 0, add_command, kAddRepeatable},
    {"list",
     "[--config FILE] webhook list",
     "Lists the subscriptions, a line each, under a header: id, enabled, statuses,\n"
     "addresses (how many it follows), acked_seq (every change it follows up to there is\n"
     "acknowledged), lag (changes of the feed after acked_seq), delivered and retried\n"
     "(all time), failing_since (failing for 24 h, since), lost_before_seq (when not 0:\n"
     "changes up to there that it had not acknowledged were trimmed from the feed),\n"
     "replay_from (a replay the deliverer has not started yet), last_status and\n"
     "last_attempt, url. Times are UTC; - is none. Never a secret.",
     {},
     0,
     list_command},
    {"disable",
     "[--config FILE] webhook disable ID",
     "Stops the deliveries to subscription ID; its cursor stays. A disabled subscription holds\n"
     "no change in the feed: a change it follows that the feed drops meanwhile (past a day)\n"
     "shows in its lost_before_seq.",
     {},
     1,
     disable_command},
    {"enable",
     "[--config FILE] webhook enable ID",
     "Resumes the deliveries to subscription ID from its cursor.",
     {},
     1,
     enable_command},
    {"remove",
     "[--config FILE] webhook remove ID",
     "Deletes subscription ID with its addresses, its queue and its secret, in one\n"
     "transaction. Its receiver gets nothing more.",
     {},
     1,
     remove_command},
    {"replay", "[--config FILE] webhook replay ID --since SEQ",
     "Sends subscription ID again every change it follows with seq >= SEQ, in order (the\n"
     "deliverer starts at its next round), and clears its lost_before_seq. SEQ must be in\n"
     "the change feed, from its oldest change (a refusal names it) to its newest.",
     kReplayOptions, 1, replay_command},
};

}  // namespace

constinit const Command kWebhookCommand = {
    "webhook",
    "[--config FILE] webhook add|list|disable|enable|remove|replay ...",
    "Signed webhooks to exchanges: a subscription follows recipients and record states, and\n"
    "the deliverer (connector-webhooks) POSTs each change of such a record to its URL,\n"
    "signed with the subscription's secret. Run these as the database's admin account on\n"
    "the primary (/usr/share/connector/admin.conf.example): it alone may write\n"
    "subscriptions and read the secrets database.",
    {},
    0,
    nullptr,
    {},
    kSubcommands,
};

}  // namespace connector::admin
