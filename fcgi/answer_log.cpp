#include "answer_log.h"

#include "util/clock.h"
#include "util/log.h"

namespace connector::fcgi {

void log_access(const util::AccessLog& access_log, const api::HttpResponse& response,
                const std::string& method, std::uint64_t duration_us, bool slow, int pid) {
  const bool probe = response.endpoint_index == api::kOpsEndpoint && response.status < 500;
  if (!slow && (!access_log.enabled() || probe)) return;
  const util::AccessRecord record{util::unix_ms_now(),
                                  response.request_id,
                                  method,
                                  api::endpoint_labels()[response.endpoint_index],
                                  response.status,
                                  duration_us,
                                  response.body.size(),
                                  pid};
  const std::string line = util::format_access_line(record);
  if (slow) util::log_warning("slow request: " + line.substr(0, line.size() - 1));
  access_log.write(line);
}

}  // namespace connector::fcgi
