#pragma once
// The Prometheus text exposition format's pieces (0.0.4): a metric's HELP and TYPE lines and its
// samples, written into the answer's buffer.
#include <rapidjson/stringbuffer.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace connector::metrics::prometheus_text {

inline void put(rapidjson::StringBuffer& out, std::string_view text) {
  for (char c : text) out.Put(c);
}

inline void put_number(rapidjson::StringBuffer& out, std::uint64_t value) {
  put(out, std::to_string(value));
}

inline void header(rapidjson::StringBuffer& out, std::string_view name, std::string_view type,
                   std::string_view help) {
  put(out, "# HELP ");
  put(out, name);
  put(out, " ");
  put(out, help);
  put(out, "\n# TYPE ");
  put(out, name);
  put(out, " ");
  put(out, type);
  put(out, "\n");
}

inline void sample(rapidjson::StringBuffer& out, std::string_view name, std::string_view labels,
                   std::uint64_t value) {
  put(out, name);
  if (!labels.empty()) {
    put(out, "{");
    put(out, labels);
    put(out, "}");
  }
  put(out, " ");
  put_number(out, value);
  put(out, "\n");
}

inline void single(rapidjson::StringBuffer& out, std::string_view name, std::string_view type,
                   std::string_view help, std::uint64_t value) {
  header(out, name, type, help);
  sample(out, name, {}, value);
}

}  // namespace connector::metrics::prometheus_text
