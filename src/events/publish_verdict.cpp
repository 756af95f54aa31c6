#include "events/publish_verdict.h"

namespace connector::events {

PublishVerdict publish_verdict(long status) {
  switch (status) {
    case 201:
    case 202:
      return PublishVerdict::kTaken;
    case 400:
    case 403:
    case 413:
    case 414:
    case 500:
    case 507:
      return PublishVerdict::kRefused;
    default:
      return PublishVerdict::kRetry;
  }
}

}  // namespace connector::events
