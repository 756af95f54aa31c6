#include "util/access_log.h"

#include <fcntl.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <stdexcept>

namespace connector::util {
namespace {

std::string iso_time(std::int64_t unix_ms) {
  const std::time_t seconds = static_cast<std::time_t>(unix_ms / 1000);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char text[32];
  const std::size_t n = std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &utc);
  char millis[8];
  std::snprintf(millis, sizeof millis, ".%03dZ", static_cast<int>(unix_ms % 1000));
  return std::string(text, n) + millis;
}

std::string milliseconds(std::uint64_t us) {
  return std::to_string(us / 1000) + "." + std::to_string(us % 1000 + 1000).substr(1);
}

}  // namespace

std::string format_access_line(const AccessRecord& r) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
  auto text = [&w](const char* key, std::string_view value) {
    w.Key(key);
    w.String(value.data(), static_cast<rapidjson::SizeType>(value.size()));
  };
  w.StartObject();
  text("time", iso_time(r.time_unix_ms));
  text("request_id", r.request_id);
  text("method", r.method);
  text("endpoint", r.endpoint);
  w.Key("status");
  w.Int(r.status);
  w.Key("duration_ms");
  const std::string duration = milliseconds(r.duration_us);
  w.RawValue(duration.data(), duration.size(), rapidjson::kNumberType);
  w.Key("bytes");
  w.Uint64(r.bytes);
  w.Key("pid");
  w.Int(r.pid);
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize()) + "\n";
}

AccessLog::AccessLog(const std::string& destination) {
  if (destination == "off") return;
  if (destination == "stderr" || destination.empty()) {
    fd_ = STDERR_FILENO;
    return;
  }
  file_.reset(::open(destination.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0640));
  if (!file_) {
    throw std::runtime_error("cannot open access log " + destination + ": " + std::strerror(errno));
  }
  fd_ = file_.get();
}

void AccessLog::write(std::string_view line) const {
  if (fd_ < 0) return;
  // Best effort: a full disk must not fail the request that was already answered.
  [[maybe_unused]] const auto written = ::write(fd_, line.data(), line.size());
}

}  // namespace connector::util
