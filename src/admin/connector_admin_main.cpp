// connector-admin: operator commands that need no SQL. `connector-admin --help` lists them,
// `connector-admin COMMAND --help` explains one. Exit status: 0 done, 1 failed (one line on
// stderr says why), 2 wrong usage.
#include <charconv>
#include <fstream>
#include <iostream>
#include <map>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "admin/bulk_history.h"
#include "admin/import_document.h"
#include "admin/import_writes.h"
#include "admin/progress.h"
#include "admin/sample_data.h"
#include "config/config.h"
#include "config/keys.h"
#include "db/connection.h"
#include "db/refreshed_reference.h"
#include "util/log.h"

namespace {

using namespace connector;

// Wrong usage: reported with a pointer to the command's --help, exit status 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// What a command receives: the --config path (may be empty) and its own arguments, with its
// options (--name value) separated from the positional ones.
struct Invocation {
  std::string config_path;
  std::vector<std::string> positional;
  std::map<std::string, std::string> options;

  config::Config config() const { return config::load_config(config_path); }
};

struct Command {
  std::string_view name;
  std::string_view synopsis;  // after "connector-admin "
  std::string_view help;      // what it does, its options
  std::span<const std::string_view> options;
  std::size_t positional;  // how many positional arguments it takes
  int (*run)(const Invocation&);
};

std::uint64_t parse_count(const std::string& text, std::string_view what) {
  std::uint64_t value = 0;
  const auto* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end) {
    throw UsageError(std::string(what) + " must be a whole number, got '" + text + "'");
  }
  return value;
}

std::uint64_t option_count(const Invocation& call, const std::string& name,
                           std::uint64_t fallback) {
  const auto found = call.options.find(name);
  return found == call.options.end() ? fallback : parse_count(found->second, name);
}

std::string read_file(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw std::runtime_error("cannot read " + path);
  std::ostringstream content;
  content << file.rdbuf();
  return content.str();
}

// The operator's commands run bulk statements: rebuilding the counters over 2,000,000 records
// takes tens of seconds, which the request path's read timeout (db_read_timeout_s, 5 s) would
// cut as a hung server. Ten minutes still ends a command whose server hangs.
constexpr unsigned kAdminReadTimeoutS = 600;

db::Connection admin_database(const config::Config& config) {
  db::init_driver();
  auto options = db::connection_options(config.db);
  options.read_timeout_s = kAdminReadTimeoutS;
  return db::Connection({{config.db.primary(), config.db.user, config.db.password}}, options);
}

int import_command(const Invocation& call) {
  const auto& path = call.positional[0];
  const auto config = call.config();
  auto database = admin_database(config);
  const auto existing = db::load_reference_data(database);
  const auto batch = admin::read_import_document(read_file(path), existing);
  admin::Progress progress("import", batch.history.size(), admin::Progress::for_stderr());
  const auto counts = admin::write_import_batch(database, batch, &progress);
  progress.finish();
  std::cout << "imported " << path << ": " << counts.networks << " networks, " << counts.assets
            << " assets, " << counts.connects << " connects, " << counts.pairs << " pairs, "
            << counts.chains << " chains, " << counts.history << " history records, "
            << counts.deposit_accounts << " deposit accounts\n";
  return 0;
}

int gen_history_command(const Invocation& call) {
  admin::BulkHistoryOptions options;
  options.count = parse_count(call.positional[0], "N");
  if (options.count == 0) throw UsageError("N must be at least 1");
  options.seed = option_count(call, "--seed", options.seed);
  options.recipients = option_count(call, "--recipients", options.recipients);
  auto database = admin_database(call.config());
  const auto first = admin::generate_history(database, options, admin::Progress::for_stderr());
  std::cout << "generated " << options.count << " history records, ids " << first << " to "
            << first + options.count - 1 << "\n";
  return 0;
}

int sample_command(const Invocation& call) {
  admin::SampleOptions options;
  options.history = option_count(call, "--history", options.history);
  options.seed = option_count(call, "--seed", options.seed);
  std::cout << admin::make_sample_document(options);
  return 0;
}

int config_docs_command(const Invocation& call) {
  try {
    std::cout << config::config_document(call.positional[0]);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  return 0;
}

constexpr std::string_view kSampleOptions[] = {"--history", "--seed"};
constexpr std::string_view kGenHistoryOptions[] = {"--seed", "--recipients"};

const Command kCommands[] = {
    {"import",
     "[--config FILE] import DOCUMENT.json",
     "Validates DOCUMENT.json (the API's own shapes: networks, assets, pairs, chains, history,\n"
     "connects; every key optional) against itself and the database, then writes it in one\n"
     "transaction: all of it or nothing. Loading the same file twice changes nothing.\n"
     "Shows progress on a terminal.",
     {},
     1,
     import_command},
    {"sample", "sample [--history N] [--seed S]",
     "Prints a coherent sample import document on stdout: the demo's networks, pairs and\n"
     "chains, and N history records (default 3000) generated from seed S (default 1).",
     kSampleOptions, 0, sample_command},
    {"gen-history", "[--config FILE] gen-history N [--seed S] [--recipients R]",
     "Appends N generated history records (skewed: a few busy addresses, many light ones; all\n"
     "statuses, both directions, every pair) in bulk, for benchmarks and scale tests, then\n"
     "rebuilds the history counters. Run it on an otherwise idle database. R: distinct\n"
     "recipients (default N/8). Shows rows done, rate and time left on a terminal.",
     kGenHistoryOptions, 1, gen_history_command},
    {"config-docs",
     "config-docs example|readme|operations",
     "Prints a document generated from the table of config keys (src/config/keys.cpp): the\n"
     "example config file, or the markdown table of README.md or of docs/operations.md.\n"
     "scripts/config-docs writes them into place.",
     {},
     1,
     config_docs_command},
};

const Command* find_command(std::string_view name) {
  for (const auto& command : kCommands) {
    if (command.name == name) return &command;
  }
  return nullptr;
}

void print_overview(std::ostream& out) {
  out << "usage: connector-admin [--config FILE] COMMAND [ARGS]\n\n"
         "Operator commands of the UNIT connector query service. FILE is the worker's\n"
         "configuration (key = value; CONNECTOR_* environment variables override it).\n\n"
         "commands:\n";
  for (const auto& command : kCommands) out << "  connector-admin " << command.synopsis << "\n";
  out << "\n`connector-admin COMMAND --help` explains one. Exit status: 0 done, 1 failed, "
         "2 wrong usage.\n";
}

void print_help(const Command& command) {
  std::cout << "usage: connector-admin " << command.synopsis << "\n\n" << command.help << "\n";
}

// Splits a command's arguments into options it knows and positional ones.
Invocation parse_arguments(const Command& command, std::string config_path,
                           std::span<const std::string> args) {
  Invocation call{std::move(config_path), {}, {}};
  for (std::size_t i = 0; i < args.size(); ++i) {
    const auto& arg = args[i];
    if (arg.starts_with("--")) {
      bool known = false;
      for (const auto name : command.options) known = known || name == arg;
      if (!known) throw UsageError("unknown option " + arg);
      if (i + 1 == args.size()) throw UsageError(arg + " needs a value");
      call.options[arg] = args[++i];
    } else {
      call.positional.push_back(arg);
    }
  }
  if (call.positional.size() != command.positional) {
    throw UsageError(command.positional == 0 ? "takes no arguments besides its options"
                                             : "needs exactly one argument");
  }
  return call;
}

// One line whatever the message holds, so scripts can log it as it is.
std::string one_line(std::string text) {
  for (auto& c : text) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return text;
}

bool is_help(std::string_view arg) { return arg == "--help" || arg == "-h" || arg == "help"; }

}  // namespace

int main(int argc, char** argv) {
  util::log_errors_only();  // a failure is reported once, below, on one line
  std::vector<std::string> args(argv + 1, argv + argc);
  std::string config_path;
  if (args.size() >= 2 && args[0] == "--config") {
    config_path = args[1];
    args.erase(args.begin(), args.begin() + 2);
  }
  if (args.empty()) {
    print_overview(std::cerr);
    return 2;
  }
  if (is_help(args[0])) {
    const Command* command = args.size() > 1 ? find_command(args[1]) : nullptr;
    command != nullptr ? print_help(*command) : print_overview(std::cout);
    return 0;
  }
  const Command* command = find_command(args[0]);
  if (command == nullptr) {
    std::cerr << "connector-admin: unknown command '" << one_line(args[0])
              << "' (see connector-admin --help)\n";
    return 2;
  }
  const std::span<const std::string> rest(args.begin() + 1, args.end());
  for (const auto& arg : rest) {
    if (arg == "--help" || arg == "-h") {
      print_help(*command);
      return 0;
    }
  }
  try {
    return command->run(parse_arguments(*command, config_path, rest));
  } catch (const UsageError& e) {
    std::cerr << "connector-admin " << command->name << ": " << one_line(e.what())
              << " (see connector-admin " << command->name << " --help)\n";
    return 2;
  } catch (const admin::ImportError& e) {
    std::cerr << "import rejected, nothing written: " << one_line(e.what()) << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "connector-admin " << command->name << ": " << one_line(e.what()) << "\n";
    return 1;
  }
}
