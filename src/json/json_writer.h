#pragma once
// RapidJSON writer shortcuts: the body of every answer is written with these into a buffer the
// worker thread reuses from request to request.
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace connector::json {

class JsonWriter : public rapidjson::Writer<rapidjson::StringBuffer> {
 public:
  using Writer::Writer;

  // A value already written as JSON text (json::ObjectText), copied whole: RawValue copies it
  // a byte at a time, a tenth of the worker's time on a history page.
  void raw(std::string_view json, rapidjson::Type type) {
    Prefix(type);
    std::memcpy(os_->Push(json.size()), json.data(), json.size());
    EndValue(true);
  }
};

inline void string(JsonWriter& w, std::string_view value) {
  w.String(value.data(), static_cast<rapidjson::SizeType>(value.size()));
}

inline void key(JsonWriter& w, std::string_view name) {
  w.Key(name.data(), static_cast<rapidjson::SizeType>(name.size()));
}

inline void member(JsonWriter& w, std::string_view name, std::string_view value) {
  key(w, name);
  string(w, value);
}

// Integers the contract carries as strings (ids, heights, page numbers).
inline void member_as_string(JsonWriter& w, std::string_view name, std::uint64_t value) {
  member(w, name, std::to_string(value));
}

inline void member_int(JsonWriter& w, std::string_view name, std::int64_t value) {
  key(w, name);
  w.Int64(value);
}

inline void member_uint(JsonWriter& w, std::string_view name, std::uint64_t value) {
  key(w, name);
  w.Uint64(value);
}

inline void member_bool(JsonWriter& w, std::string_view name, bool value) {
  key(w, name);
  w.Bool(value);
}

}  // namespace connector::json
