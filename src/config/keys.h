#pragma once
// Every key of the config file, in one table: name, the field it sets, its range, whether a
// reload applies it, and its description. Parsing, the environment overrides, describe(), the
// example file (fcgi/connector.conf.example) and the table of docs/operations.md all come
// from it (the documents through `connector-admin config-docs`, checked by
// scripts/config-docs --check), so a new key is one row here.
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "config/config.h"

namespace connector::config {

using Field =
    std::variant<std::string WorkerSettings::*, unsigned WorkerSettings::*, bool WorkerSettings::*,
                 std::string DatabaseSettings::*, unsigned DatabaseSettings::*,
                 std::vector<DatabaseEndpoint> DatabaseSettings::*, std::string WebhookSettings::*,
                 unsigned WebhookSettings::*>;

struct Key {
  std::string_view name;
  Field field;
  unsigned min = 0;  // numbers: the accepted range
  unsigned max = 0;
  int base = 10;                  // 8: an octal mode, written with a leading 0
  bool secret = false;            // never shown: describe() says (set) or (empty)
  std::string_view group = {};    // the example file's heading above this key, when it changes
  std::string_view example = {};  // for a key empty by default: a value shown commented out
  std::string_view reload = {};   // what SIGHUP does with it: "yes", "restart", ...
  std::string_view brief = {};    // one sentence: the example file
  std::string_view detail = {};   // docs/operations.md (brief when empty)
};

std::span<const Key> keys();

// Sets the key's field from text, or throws ConfigError("<key> must be ...").
void set(const Key& key, Config& config, const std::string& value);
// The field's value as the file would hold it ("0660", "a:1,unix:/b", "" when empty).
std::string value_text(const Key& key, const Config& config);

// The generated documents: "example" (the whole example config file), "readme" and
// "operations" (markdown tables). Throws std::invalid_argument on another name.
std::string config_document(std::string_view which);

}  // namespace connector::config
