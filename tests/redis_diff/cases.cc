#include "cases.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <stdexcept>

namespace holdfast::testing {
namespace {

std::runtime_error mistake(const std::string& path, int line, const std::string& what) {
  return std::runtime_error(path + ":" + std::to_string(line) + ": " + what);
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Splits a command line into words, quotes as in redis-cli.
std::vector<std::string> words(const std::string& text, const std::string& path, int line) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i < text.size()) {
    if (text[i] == ' ' || text[i] == '\t') {
      ++i;
      continue;
    }
    std::string word;
    if (text[i] == '"') {
      for (++i;; ++i) {
        if (i >= text.size()) throw mistake(path, line, "an unclosed \"");
        char c = text[i];
        if (c == '"') break;
        if (c == '\\' && i + 1 < text.size()) {
          const char e = text[++i];
          if (e == 'n') {
            c = '\n';
          } else if (e == 'r') {
            c = '\r';
          } else if (e == 'x' && i + 2 < text.size() && hex_value(text[i + 1]) >= 0 &&
                     hex_value(text[i + 2]) >= 0) {
            c = static_cast<char>(hex_value(text[i + 1]) * 16 + hex_value(text[i + 2]));
            i += 2;
          } else {
            c = e;
          }
        }
        word.push_back(c);
      }
      ++i;
    } else if (text[i] == '\'') {
      const std::size_t end = text.find('\'', i + 1);
      if (end == std::string::npos) throw mistake(path, line, "an unclosed '");
      word = text.substr(i + 1, end - i - 1);
      i = end + 1;
    } else {
      while (i < text.size() && text[i] != ' ' && text[i] != '\t') word.push_back(text[i++]);
    }
    out.push_back(std::move(word));
  }
  return out;
}

}  // namespace

std::vector<DiffCase> load_cases(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  const std::string stem = std::filesystem::path(path).stem().string();
  std::vector<DiffCase> cases;
  std::map<std::string, std::string> scripts;
  std::string text;
  int number = 0;
  while (std::getline(in, text)) {
    ++number;
    if (text.empty() || text[0] == '#') continue;
    if (text.rfind("== ", 0) == 0) {
      cases.push_back(DiffCase{stem, text.substr(3), {}, {}});
      continue;
    }
    if (text.rfind("!script ", 0) == 0) {
      const std::string name = text.substr(8);
      std::string body;
      const int started = number;
      for (;;) {
        if (!std::getline(in, text)) throw mistake(path, started, "a !script without !end");
        ++number;
        if (text == "!end") break;
        body += text + "\n";
      }
      scripts[name] = body;
      continue;
    }
    if (cases.empty()) throw mistake(path, number, "a command before the first == case");
    DiffCase& c = cases.back();
    if (text.rfind("!requires ", 0) == 0) {
      c.requires_commands.push_back(text.substr(10));
      continue;
    }
    CaseLine line;
    line.line_number = number;
    if (text.rfind("!sleep ", 0) == 0) {
      line.sleep_ms = std::stoi(text.substr(7));
      c.lines.push_back(std::move(line));
      continue;
    }
    if (text.rfind("~ ", 0) == 0) {
      line.approximate = true;
      text = text.substr(2);
    } else if (text.rfind("^ ", 0) == 0) {
      line.prefix = true;
      text = text.substr(2);
    }
    if (const auto arrow = text.find(" => "); arrow != std::string::npos) {
      line.expected = text.substr(arrow + 4);
      text = text.substr(0, arrow);
    }
    line.args = words(text, path, number);
    for (std::string& w : line.args) {
      if (w.size() > 1 && w[0] == '$') {
        const auto s = scripts.find(w.substr(1));
        if (s == scripts.end()) throw mistake(path, number, "no script named " + w);
        w = s->second;
      }
    }
    if (line.args.empty()) throw mistake(path, number, "an empty command");
    c.lines.push_back(std::move(line));
  }
  return cases;
}

std::string with_keys(const std::string& word, const std::string& prefix) {
  std::string out;
  for (std::size_t i = 0; i < word.size(); ++i) {
    if (word[i] == '{' && i + 2 < word.size() && word[i + 1] == 'k') {
      std::size_t end = i + 2;
      if (end < word.size() && word[end] >= '2' && word[end] <= '9') ++end;
      if (end < word.size() && word[end] == '}') {
        out += prefix + word.substr(i + 1, end - i - 1);
        i = end;
        continue;
      }
    }
    out.push_back(word[i]);
  }
  return out;
}

}  // namespace holdfast::testing
