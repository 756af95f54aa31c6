#pragma once
// What nchan's status for one publish means to the publisher (events/publisher.h): taken,
// refused for good (retrying it would only hold every change behind it), or worth retrying.
#include <cstdint>

namespace connector::events {

enum class PublishVerdict : std::uint8_t {
  kTaken,    // 201 (a subscriber got it) or 202 (kept for those to come)
  kRefused,  // this message, for good: passed over and counted
  kRetry,    // nchan not there as it should be: the same message again next round
};

// Refusals of the one message: 507, nchan's shared memory full; 500, a publish that failed
// inside nchan (a publish to several channels whose memory is full gets it, not 507: seen on
// nchan 1.3.6); 400, 403, 413, 414, the message or its channel names refused. Anything else is
// retried: no answer (events/nchan_client.h), a 404 or 405 (a publisher location missing: nginx
// without the drop-in, or mid-reload), another 5xx (nginx failing), none about this message;
// passing over those would lose every change.
PublishVerdict publish_verdict(long status);

}  // namespace connector::events
