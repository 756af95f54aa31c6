// GET /v1/account: the deposit address bound to a recipient, recorded for the chain watchers
// before it is returned.
#include "api/endpoints.h"
#include "api/params.h"
#include "chain/deposit_address.h"
#include "http/api_error.h"

namespace connector::api {
namespace {

// All three required, echoed as sent.
constexpr ParamSpec kParams[] = {
    {"recipient_address", ParamKind::kAddress, true, "recipient_address"},
    {"recipient_blockchain", ParamKind::kSlug, true, "recipient_blockchain"},
    {"deposit_blockchain", ParamKind::kSlug, true, "deposit_blockchain"},
};

// Main-chain recipients must be written exactly in EIP-55 form: a wrong case there is more
// often a typo than a choice, and the checksum catches it.
void require_checksum_on_main_chain(std::string_view text, const chain::Address& address,
                                    const domain::Chain& recipient_chain) {
  if (!recipient_chain.is_main_base() || chain::is_checksummed(text)) return;
  throw http::invalid_parameter(
      "recipient_address", "recipient_address must be in checksum form on " + recipient_chain.slug +
                               ": " + address.checksummed());
}

Answer account(const RequestContext& request, const Services& services, json::JsonWriter& out) {
  const ValidParams& params = request.params;
  const auto address_text = params.text("recipient_address");
  const auto recipient = *params.get<chain::Address>("recipient_address");
  const auto& recipient_chain = **params.get<const domain::Chain*>("recipient_blockchain");
  const auto& deposit_chain = **params.get<const domain::Chain*>("deposit_blockchain");
  const auto& data = params.reference();
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
  params.write_echo(out);
  json::member(out, "deposit_address", deposit_text);
  out.EndObject();
  return Answer::kUsual;
}

}  // namespace

// nginx never stores it: a stored (or stale) answer would skip the recording, e.g. after a
// database restore.
const EndpointSpec kAccountEndpoint("/v1/account", kParams,
                                    CachePolicy::not_front_cached(kAccountCacheControl), account);

}  // namespace connector::api
