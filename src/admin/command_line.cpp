#include "admin/command_line.h"

#include <algorithm>
#include <charconv>

namespace connector::admin {
namespace {

bool listed(std::span<const std::string_view> names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

}  // namespace

const std::string* Invocation::option(std::string_view name) const {
  const auto found = options.find(name);
  return found == options.end() || found->second.empty() ? nullptr : &found->second.back();
}

std::span<const std::string> Invocation::values(std::string_view name) const {
  const auto found = options.find(name);
  if (found == options.end()) return {};
  return found->second;
}

const Command* find_command(std::span<const Command> commands, std::string_view name) {
  for (const auto& command : commands) {
    if (command.name == name) return &command;
  }
  return nullptr;
}

Invocation parse_arguments(const Command& command, std::string config_path,
                           std::span<const std::string> args) {
  Invocation call{std::move(config_path), {}, {}};
  for (std::size_t i = 0; i < args.size(); ++i) {
    const auto& arg = args[i];
    if (!arg.starts_with("--")) {
      call.positional.push_back(arg);
      continue;
    }
    const bool repeatable = listed(command.repeatable, arg);
    if (!repeatable && !listed(command.options, arg)) throw UsageError("unknown option " + arg);
    if (i + 1 == args.size()) throw UsageError(arg + " needs a value");
    auto& values = call.options[arg];
    if (!repeatable && !values.empty()) throw UsageError(arg + " is given twice");
    values.push_back(args[++i]);
  }
  if (call.positional.size() != command.positional) {
    throw UsageError(command.positional == 0 ? "takes no arguments besides its options"
                                             : "needs exactly one argument");
  }
  return call;
}

void print_help(std::ostream& out, const Command& command) {
  out << "usage: connector-admin " << command.synopsis << "\n\n" << command.help << "\n";
  if (!command.subcommands.empty()) {
    out << "\ncommands:\n";
    print_synopses(out, command.subcommands);
    out << "\n`connector-admin " << command.name << " COMMAND --help` explains one.\n";
  }
}

void print_synopses(std::ostream& out, std::span<const Command> commands) {
  for (const auto& command : commands) {
    if (command.subcommands.empty()) {
      out << "  connector-admin " << command.synopsis << "\n";
    } else {
      print_synopses(out, command.subcommands);
    }
  }
}

std::uint64_t parse_count(const std::string& text, std::string_view what) {
  std::uint64_t value = 0;
  const auto* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end) {
    throw UsageError(std::string(what) + " must be a whole number, got '" + text + "'");
  }
  return value;
}

std::uint64_t option_count(const Invocation& call, std::string_view name, std::uint64_t fallback) {
  const std::string* value = call.option(name);
  return value == nullptr ? fallback : parse_count(*value, name);
}

std::string one_line(std::string text) {
  for (auto& c : text) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return text;
}

}  // namespace connector::admin
