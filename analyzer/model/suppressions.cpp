#include "model/suppressions.h"

#include <fstream>
#include <stdexcept>

namespace prof {
namespace {

// '*' matches any run; the rest literally. Backtracks to the last '*' only.
bool glob(const char *p, const char *pend, const char *s, const char *send) {
  const char *star = nullptr, *resume = nullptr;
  while (s < send) {
    if (p < pend && *p == '*') {
      star = ++p;
      resume = s;
    } else if (p < pend && *p == *s) {
      p++;
      s++;
    } else if (star) {
      p = star;
      s = ++resume;
    } else {
      return false;
    }
  }
  while (p < pend && *p == '*') p++;
  return p == pend;
}

std::string trim(const std::string &s) {
  const size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
}

}  // namespace

bool template_match(const std::string &pattern, const std::string &text) {
  if (text.empty()) return false;
  std::string p = pattern;
  // Unanchored ends match anywhere: an implicit '*' on each open side.
  if (!p.empty() && p.front() == '^')
    p.erase(0, 1);
  else
    p.insert(0, "*");
  if (!p.empty() && p.back() == '$')
    p.pop_back();
  else
    p += '*';
  return glob(p.data(), p.data() + p.size(), text.data(), text.data() + text.size());
}

Suppressions Suppressions::load(const std::string &path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": cannot read the suppressions file");
  Suppressions s;
  std::string line;
  for (size_t n = 1; std::getline(in, line); n++) {
    line = trim(line);
    if (line.empty() || line[0] == '#') continue;
    const size_t colon = line.find(':');
    const std::string where = path + ":" + std::to_string(n) + ": ";
    if (colon == std::string::npos)
      throw std::runtime_error(where + "expected leak:PATTERN, got '" + line + "'");
    if (line.compare(0, colon, "leak") != 0)
      throw std::runtime_error(where + "suppression type '" + line.substr(0, colon) +
                               "' is not supported (only leak:)");
    const std::string pattern = trim(line.substr(colon + 1));
    if (pattern.empty()) throw std::runtime_error(where + "empty pattern");
    s.patterns_.push_back(pattern);
  }
  return s;
}

const char *const kDefaultSuppressions[] = {
    // The loader: libraries' link maps, names, dependencies and versions,
    // the dl_find_object tables, threads' TLS (kept with cached stacks).
    "^_dl_new_object$",
    "^_dl_map_object$",
    "^_dl_map_object_deps$",
    "^_dl_check_map_versions$",
    "^_dl_find_object_update$",
    "^_dl_allocate_tls$",
    // stdio's buffers of the streams open at exit (stdin, stdout).
    "^_IO_file_doallocate$",
    // Locales, character set conversions, name service modules, getpw*'s
    // static result buffers.
    "^setlocale$",
    "^__wcsmbs_load_conv$",
    "^__nss_database_get$",
    "^getpwuid$",
    "^getpwnam$",
};
const size_t kDefaultSuppressionCount = sizeof kDefaultSuppressions / sizeof *kDefaultSuppressions;

void Suppressions::add_defaults() {
  patterns_.insert(patterns_.begin(), kDefaultSuppressions,
                   kDefaultSuppressions + kDefaultSuppressionCount);
  defaults_ = kDefaultSuppressionCount;
}

int Suppressions::match(const std::vector<Frame> &stack) const {
  for (size_t i = 0; i < patterns_.size(); i++)
    for (const Frame &f : stack)
      if (template_match(patterns_[i], f.function) || template_match(patterns_[i], f.module) ||
          template_match(patterns_[i], f.file))
        return int(i);
  return -1;
}

}  // namespace prof
