// connector-admin: operator commands that need no SQL.
//   connector-admin [--config FILE] import DOCUMENT.json
//   connector-admin sample [--history N] [--seed S]      (prints a sample document)
//   connector-admin [--config FILE] gen-history N [--seed S] [--recipients R]
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "admin/bulk_history.h"
#include "admin/import_document.h"
#include "admin/import_store.h"
#include "admin/sample_data.h"
#include "config/config.h"
#include "db/database.h"
#include "db/reference_store.h"

namespace {

using namespace connector;

int usage(int code) {
  std::cerr << "usage: connector-admin [--config FILE] import DOCUMENT.json\n"
               "       connector-admin sample [--history N] [--seed S]\n"
               "       connector-admin [--config FILE] gen-history N [--seed S] [--recipients R]\n";
  return code;
}

std::string read_file(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw std::runtime_error("cannot read " + path);
  std::ostringstream content;
  content << file.rdbuf();
  return content.str();
}

db::Database admin_database(const config::Config& config) {
  db::init_driver();
  return db::Database({{config.db.primary(), config.db.user, config.db.password}},
                      db::connection_options(config.db));
}

int import_command(const config::Config& config, const std::string& path) {
  auto database = admin_database(config);
  const auto existing = db::load_reference_data(database);
  const auto batch = admin::read_import_document(read_file(path), existing);
  const auto counts = admin::write_import_batch(database, batch);
  std::cout << "imported " << path << ": " << counts.networks << " networks, " << counts.assets
            << " assets, " << counts.connects << " connects, " << counts.pairs << " pairs, "
            << counts.chains << " chains, " << counts.history << " history records, "
            << counts.deposit_accounts << " deposit accounts\n";
  return 0;
}

int gen_history_command(const config::Config& config, const std::vector<std::string>& args) {
  if (args.empty()) return usage(2);
  if (args[0] == "--help" || args[0] == "-h" || args[0] == "help") return usage(0);
  admin::BulkHistoryOptions options;
  options.count = std::stoull(args[0]);
  for (std::size_t i = 1; i < args.size(); ++i) {
    if (args[i] == "--seed" && i + 1 < args.size()) {
      options.seed = std::stoull(args[++i]);
    } else if (args[i] == "--recipients" && i + 1 < args.size()) {
      options.recipients = std::stoull(args[++i]);
    } else {
      return usage(2);
    }
  }
  auto database = admin_database(config);
  // Progress only for a person watching: quiet in scripts and CI.
  const auto first =
      admin::generate_history(database, options, ::isatty(STDERR_FILENO) ? &std::cerr : nullptr);
  std::cout << "generated " << options.count << " history records, ids " << first << " to "
            << first + options.count - 1 << "\n";
  return 0;
}

int sample_command(const std::vector<std::string>& args) {
  admin::SampleOptions options;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--history" && i + 1 < args.size()) {
      options.history = std::stoull(args[++i]);
    } else if (args[i] == "--seed" && i + 1 < args.size()) {
      options.seed = std::stoull(args[++i]);
    } else {
      return usage(2);
    }
  }
  std::cout << admin::make_sample_document(options);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  std::string config_path;
  if (args.size() >= 2 && args[0] == "--config") {
    config_path = args[1];
    args.erase(args.begin(), args.begin() + 2);
  }
  if (args.empty()) return usage(2);
  try {
    if (args[0] == "sample") return sample_command({args.begin() + 1, args.end()});
    if (args[0] == "gen-history") {
      return gen_history_command(config::load_config(config_path), {args.begin() + 1, args.end()});
    }
    if (args[0] == "import" && args.size() == 2) {
      return import_command(config::load_config(config_path), args[1]);
    }
    return usage(2);
  } catch (const admin::ImportError& e) {
    std::cerr << "import rejected, nothing written: " << e.what() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "connector-admin: " << e.what() << "\n";
    return 1;
  }
}
