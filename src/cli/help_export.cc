#include "cli/help_export.h"

#include <fstream>
#include <iostream>
#include <string_view>

#include "cli/build_info.h"
#include "cli/commands.h"
#include "cli/help_model.h"

namespace holdfast::cli {

bool is_help_export(int argc, char** argv) {
  return argc > 1 && std::string_view(argv[1]) == "help-export";
}

int export_help(const CLI::App& app, int argc, char** argv) {
  constexpr const char* kUsage = "usage: holdfast help-export man|bash|zsh [-o FILE]\n";
  std::string_view format;
  std::string output;
  for (int i = 2; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "-o" && i + 1 < argc) {
      output = argv[++i];
    } else if (format.empty() && (arg == "man" || arg == "bash" || arg == "zsh")) {
      format = arg;
    } else {
      std::cerr << "holdfast help-export: unexpected argument '" << arg << "'\n" << kUsage;
      return kExitUsage;
    }
  }
  if (format.empty()) {
    std::cerr << kUsage;
    return kExitUsage;
  }
  std::ofstream file;
  if (!output.empty()) {
    file.open(output, std::ios::trunc);
    if (!file) {
      std::cerr << "holdfast help-export: cannot write " << output << "\n";
      return kExitUsage;
    }
  }
  std::ostream& out = output.empty() ? std::cout : file;
  const CommandDoc root = describe_commands(app, "holdfast");
  if (format == "man") {
    write_man_page(out, root, kBuildInfo.version);
  } else if (format == "bash") {
    write_bash_completion(out, root);
  } else {
    write_zsh_completion(out, root);
  }
  out.flush();
  if (!out) {
    std::cerr << "holdfast help-export: cannot write " << (output.empty() ? "stdout" : output)
              << "\n";
    return kExitUsage;
  }
  return kExitOk;
}

}  // namespace holdfast::cli
