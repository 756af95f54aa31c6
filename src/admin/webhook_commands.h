#pragma once
// `connector-admin webhook add|list|disable|enable|remove|replay`: the operator's commands for
// webhook subscriptions (issue 37; docs/operations.md, section 5). They run as the admin
// config's account on the primary, which alone may write the subscriptions and read the
// secrets database (db/webhook_subscriptions.h).
#include "admin/command_line.h"

namespace connector::admin {

// The group: its subcommands, each with its synopsis and help.
extern const Command kWebhookCommand;

}  // namespace connector::admin
