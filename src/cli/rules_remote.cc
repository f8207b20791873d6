// holdfast rules push|get|delete: placeholder until the client library lands in this tree.
#include "cli/commands.h"

namespace holdfast::cli {

void add_rules_remote_commands(CLI::App&, int&) {}

}  // namespace holdfast::cli
