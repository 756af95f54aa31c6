// connector-admin: operator commands that need no SQL. `connector-admin --help` lists them,
// `connector-admin COMMAND --help` explains one. Exit status: 0 done, 1 failed (one line on
// stderr says why), 2 wrong usage.
#include <fstream>
#include <iostream>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "admin/admin_database.h"
#include "admin/bulk_history.h"
#include "admin/command_line.h"
#include "admin/import_document.h"
#include "admin/import_writes.h"
#include "admin/progress.h"
#include "admin/sample_data.h"
#include "admin/webhook_commands.h"
#include "config/config.h"
#include "config/keys.h"
#include "db/connection.h"
#include "db/refreshed_reference.h"
#include "util/log.h"

namespace {

using namespace connector;
using admin::Command;
using admin::Invocation;
using admin::option_count;
using admin::parse_count;
using admin::UsageError;

std::string read_file(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw std::runtime_error("cannot read " + path);
  std::ostringstream content;
  content << file.rdbuf();
  return content.str();
}

int import_command(const Invocation& call) {
  const auto& path = call.positional[0];
  const auto config = call.config();
  auto database = admin::admin_database(config);
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
  auto database = admin::admin_database(call.config());
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
    admin::kWebhookCommand,
};

void print_overview(std::ostream& out) {
  out << "usage: connector-admin [--config FILE] COMMAND [ARGS]\n\n"
         "Operator commands of the UNIT connector query service. FILE is the worker's\n"
         "configuration (key = value; CONNECTOR_* environment variables override it).\n\n"
         "commands:\n";
  admin::print_synopses(out, kCommands);
  out << "\n`connector-admin COMMAND --help` explains one. Exit status: 0 done, 1 failed, "
         "2 wrong usage.\n";
}

bool is_help(std::string_view arg) { return arg == "--help" || arg == "-h" || arg == "help"; }

// `connector-admin help [COMMAND [SUBCOMMAND]]`: the help of the last command the words name.
int print_help_for(std::span<const std::string> words) {
  const Command* command = nullptr;
  std::span<const Command> group = kCommands;
  for (const auto& word : words) {
    const Command* found = admin::find_command(group, word);
    if (found == nullptr) break;
    command = found;
    group = found->subcommands;
  }
  command != nullptr ? admin::print_help(std::cout, *command) : print_overview(std::cout);
  return 0;
}

// The command to run: the top command named by the first word, then, for a group, its
// subcommand named by the next (`webhook add`). Its words join in `name`; `rest` keeps what
// follows them. nullptr when the words name none, after a line on stderr; `status` is then
// the exit status (0 when a group's help was asked for and printed).
const Command* resolve_command(std::span<const std::string>& rest, std::string& name, int& status) {
  status = 2;
  const Command* command = admin::find_command(kCommands, rest.front());
  if (command == nullptr) {
    std::cerr << "connector-admin: unknown command '" << admin::one_line(rest.front())
              << "' (see connector-admin --help)\n";
    return nullptr;
  }
  name = command->name;
  rest = rest.subspan(1);
  while (!command->subcommands.empty()) {
    if (!rest.empty() && (rest.front() == "--help" || rest.front() == "-h")) {
      admin::print_help(std::cout, *command);
      status = 0;
      return nullptr;
    }
    const Command* sub =
        rest.empty() ? nullptr : admin::find_command(command->subcommands, rest.front());
    if (sub == nullptr) {
      std::cerr << "connector-admin " << name << ": "
                << (rest.empty() ? std::string("needs a command")
                                 : "unknown command '" + admin::one_line(rest.front()) + "'")
                << " (see connector-admin " << name << " --help)\n";
      return nullptr;
    }
    name += " ";
    name += sub->name;
    command = sub;
    rest = rest.subspan(1);
  }
  return command;
}

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
  if (is_help(args[0])) return print_help_for(std::span<const std::string>(args).subspan(1));
  std::span<const std::string> rest(args);
  std::string name;
  int status = 0;
  const Command* command = resolve_command(rest, name, status);
  if (command == nullptr) return status;
  for (const auto& arg : rest) {
    if (arg == "--help" || arg == "-h") {
      admin::print_help(std::cout, *command);
      return 0;
    }
  }
  try {
    return command->run(admin::parse_arguments(*command, config_path, rest));
  } catch (const UsageError& e) {
    std::cerr << "connector-admin " << name << ": " << admin::one_line(e.what())
              << " (see connector-admin " << name << " --help)\n";
    return 2;
  } catch (const admin::ImportError& e) {
    std::cerr << "import rejected, nothing written: " << admin::one_line(e.what()) << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "connector-admin " << name << ": " << admin::one_line(e.what()) << "\n";
    return 1;
  }
}
