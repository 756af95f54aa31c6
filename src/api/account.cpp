// GET /v1/account: the deposit address bound to a recipient, recorded for the chain watchers
// before it is returned.
#include "api/endpoints.h"
#include "api/params.h"
#include "chain/deposit_address.h"
#include "http/api_error.h"

namespace connector::api {
namespace {

std::string_view required(const http::QueryParams& params, std::string_view name) {
  const auto value = params.get(name);
  if (!value) throw http::missing_parameter(std::string(name));
  return *value;
}

// Main-chain recipients must be written exactly in EIP-55 form: a wrong case there is more
// often a typo than a choice, and the checksum catches it.
void require_checksum_on_main_chain(std::string_view text, const chain::Address& address,
                                    const domain::Chain& recipient_chain) {
  if (!recipient_chain.is_main_base() || chain::is_checksummed(text)) return;
  throw http::invalid_parameter(
      "recipient_address", "recipient_address must be in checksum form on " + recipient_chain.slug +
                               ": " + address.checksummed());
}

}  // namespace

CachePolicy account(const http::QueryParams& params, Services& services, json::JsonWriter& out) {
  const auto address_text = required(params, "recipient_address");
  const auto recipient_slug = required(params, "recipient_blockchain");
  const auto deposit_slug = required(params, "deposit_blockchain");

  const auto data = services.reference.get();
  const auto recipient = parse_address("recipient_address", address_text);
  const auto& recipient_chain = parse_slug("recipient_blockchain", recipient_slug, *data);
  const auto& deposit_chain = parse_slug("deposit_blockchain", deposit_slug, *data);
  if (recipient_chain.ref == deposit_chain.ref) {
    throw http::invalid_parameter("deposit_blockchain",
                                  "deposit_blockchain must differ from recipient_blockchain");
  }
  if (!data->connected(recipient_chain.ref, deposit_chain.ref)) {
    throw http::invalid_parameter("deposit_blockchain",
                                  "deposit_blockchain is not connected to recipient_blockchain");
  }
  if (!deposit_chain.deposit_factory || !deposit_chain.deposit_init_code_hash) {
    throw http::invalid_parameter("deposit_blockchain",
                                  "deposit_blockchain does not accept deposits");
  }
  require_checksum_on_main_chain(address_text, recipient, recipient_chain);

  const auto deposit =
      chain::deposit_address(*deposit_chain.deposit_factory, *deposit_chain.deposit_init_code_hash,
                             recipient_chain.chain_id, recipient);
  const std::string deposit_text = deposit.checksummed();
  // Recorded before it is shown: an address the watchers do not know could lose funds. Any
  // failure to record it is a 503, whatever the cause.
  const db::DepositAccount mapping{deposit_chain.ref, deposit_text, recipient_chain.ref,
                                   recipient.checksummed()};
  services.accounts.record(mapping);

  out.StartObject();
  json::member(out, "recipient_address", address_text);
  json::member(out, "recipient_blockchain", recipient_slug);
  json::member(out, "deposit_blockchain", deposit_slug);
  json::member(out, "deposit_address", deposit_text);
  out.EndObject();
  return kAccountCacheControl;
}

}  // namespace connector::api
