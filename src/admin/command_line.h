#pragma once
// connector-admin's command line: a table of commands, each with its synopsis, help, options
// and positional arguments, or a table of subcommands of its own (`webhook add`, `webhook
// list`, ...), and one parser for all of them. connector_admin_main.cpp holds the top table;
// a command with subcommands holds theirs (admin/webhook_commands.h).
#include <cstddef>
#include <cstdint>
#include <map>
#include <ostream>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.h"

namespace connector::admin {

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
  // Every value of each option given, in order (one, unless the option is repeatable).
  std::map<std::string, std::vector<std::string>, std::less<>> options;

  config::Config config() const { return config::load_config(config_path); }
  // The option's value; nullptr when it was not given.
  const std::string* option(std::string_view name) const;
  // Every value of a repeatable option (none when it was not given).
  std::span<const std::string> values(std::string_view name) const;
};

struct Command {
  std::string_view name;
  std::string_view synopsis;  // after "connector-admin "
  std::string_view help;      // what it does, its options
  // Options that take a value, each at most once; then those that may be given again.
  std::span<const std::string_view> options;
  std::size_t positional;  // how many positional arguments it takes
  int (*run)(const Invocation&);
  std::span<const std::string_view> repeatable = {};
  // When not empty, the command only names a group: its first argument is one of these, which
  // runs (options, positional and run above are then unused).
  std::span<const Command> subcommands = {};
};

const Command* find_command(std::span<const Command> commands, std::string_view name);

// Splits a command's arguments into the options it knows and positional ones.
Invocation parse_arguments(const Command& command, std::string config_path,
                           std::span<const std::string> args);

// "usage: connector-admin SYNOPSIS", the help, and a group's subcommands.
void print_help(std::ostream& out, const Command& command);
// Each runnable command's synopsis on a line of its own, "  connector-admin ..." (a group's
// subcommands in its place).
void print_synopses(std::ostream& out, std::span<const Command> commands);

// A whole number of a command's arguments; `what` names it in the usage error.
std::uint64_t parse_count(const std::string& text, std::string_view what);
// An option's value as a whole number, or `fallback` when the option was not given.
std::uint64_t option_count(const Invocation& call, std::string_view name, std::uint64_t fallback);

// One line whatever the message holds, so scripts can log it as it is.
std::string one_line(std::string text);

}  // namespace connector::admin
