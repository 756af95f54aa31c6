// Prints db::kSchemaEnums as JSON, for tests/integration/test_schema.py to compare with the
// migrated schema: [{"table": ..., "column": ..., "values": [...]}, ...].
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <cstdio>

#include "db/schema_enums.h"

namespace {

void string(rapidjson::Writer<rapidjson::StringBuffer>& w, std::string_view text) {
  w.String(text.data(), static_cast<rapidjson::SizeType>(text.size()));
}

}  // namespace

int main() {
  rapidjson::StringBuffer out;
  rapidjson::Writer<rapidjson::StringBuffer> w(out);
  w.StartArray();
  for (const auto& e : connector::db::kSchemaEnums) {
    w.StartObject();
    w.Key("table");
    string(w, e.table);
    w.Key("column");
    string(w, e.column);
    w.Key("values");
    w.StartArray();
    for (const auto value : e.values) string(w, value);
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
  std::puts(out.GetString());
}
