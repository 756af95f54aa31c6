#pragma once
// One answer's line in the access log (util/access_log.h), and the slow-request warning.
#include <cstdint>
#include <string>

#include "api/router.h"
#include "util/access_log.h"

namespace connector::fcgi {

// Health and monitoring probes (a balancer's, every few seconds) stay out of the access log
// unless they fail or are slow; /metrics and /status count them.
void log_access(const util::AccessLog& access_log, const api::HttpResponse& response,
                const std::string& method, std::uint64_t duration_us, bool slow, int pid);

}  // namespace connector::fcgi
