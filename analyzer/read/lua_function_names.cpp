#include "read/lua_function_names.h"

#include <cctype>
#include <cstdio>
#include <string_view>
#include <sys/stat.h>

namespace prof {
namespace {

// Larger files are not Lua someone reads; their functions keep locations.
constexpr off_t kMaxSourceBytes = 16 << 20;
constexpr std::string_view kKeyword = "function";

bool ident_char(char c) { return isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool name_char(char c) { return ident_char(c) || c == '.' || c == ':'; }

// "a", "M.foo", "obj:method": identifiers joined by single dots or a colon.
bool is_name(std::string_view s) {
  if (s.empty() || isdigit(static_cast<unsigned char>(s[0]))) return false;
  for (size_t i = 0; i < s.size(); i++)
    if (!ident_char(s[i]) && (i == 0 || i + 1 == s.size() || !ident_char(s[i - 1]))) return false;
  return true;
}

}  // namespace

std::string lua_defined_name(const std::string &text) {
  // XXX: a "--" inside a string is taken for a comment; such a line then
  // names nothing, or less, never something else.
  const std::string_view line = std::string_view(text).substr(0, text.find("--"));
  size_t at = std::string_view::npos;
  for (size_t p = line.find(kKeyword); p != std::string_view::npos;
       p = line.find(kKeyword, p + kKeyword.size())) {
    const size_t end = p + kKeyword.size();
    if ((p > 0 && ident_char(line[p - 1])) || (end < line.size() && ident_char(line[end])))
      continue;
    if (at != std::string_view::npos) return "";  // which of two functions is unknown
    at = p;
  }
  if (at == std::string_view::npos) return "";
  // `function M.foo(`, `local function foo(`: the name follows the keyword.
  size_t from = at + kKeyword.size();
  while (from < line.size() && isspace(static_cast<unsigned char>(line[from]))) from++;
  size_t to = from;
  while (to < line.size() && name_char(line[to])) to++;
  if (to > from) {
    const std::string_view name = line.substr(from, to - from);
    return is_name(name) ? std::string(name) : "";
  }
  // `foo = function(`, `local foo = function(`, a table's `foo = function(`:
  // the name is what the function is assigned to.
  size_t eq = at;
  while (eq > 0 && isspace(static_cast<unsigned char>(line[eq - 1]))) eq--;
  if (eq == 0 || line[eq - 1] != '=') return "";
  eq--;
  if (eq > 0 && std::string_view("=~<>").find(line[eq - 1]) != std::string_view::npos) return "";
  to = eq;
  while (to > 0 && isspace(static_cast<unsigned char>(line[to - 1]))) to--;
  from = to;
  while (from > 0 && name_char(line[from - 1])) from--;
  size_t before = from;
  while (before > 0 && isspace(static_cast<unsigned char>(line[before - 1]))) before--;
  if (before > 0 && line[before - 1] == ',') return "";  // `a, b = function() end, g`
  const std::string_view name = line.substr(from, to - from);
  return is_name(name) ? std::string(name) : "";
}

LuaFunctionNames::ChunkNames LuaFunctionNames::read_chunk(const std::string &chunk) const {
  if (chunk.size() < 2 || chunk[0] != '@') return {};
  std::string path = chunk.substr(1);
  if (path[0] != '/') {
    if (working_dir_.empty()) return {};
    path = working_dir_ + "/" + path;
  }
  struct stat st;
  if (stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > kMaxSourceBytes) return {};
  FILE *in = fopen(path.c_str(), "rb");
  if (!in) return {};
  ChunkNames names{"(main chunk)"};
  std::string line;
  // XXX: at most the size stat gave: /proc and /sys files say 0 and may
  // never end (a stream naming /proc/self/pagemap as its chunk).
  off_t left = st.st_size;
  for (int c; left-- > 0 && (c = getc(in)) != EOF;) {
    if (c != '\n') {
      line += char(c);
      continue;
    }
    names.push_back(lua_defined_name(line));
    line.clear();
  }
  names.push_back(lua_defined_name(line));
  fclose(in);
  return names;
}

const std::string &LuaFunctionNames::name(const std::string &chunk, uint32_t first_line) {
  static const std::string kNone;
  auto it = chunks_.find(chunk);
  if (it == chunks_.end()) it = chunks_.emplace(chunk, read_chunk(chunk)).first;
  return first_line < it->second.size() ? it->second[first_line] : kNone;
}

}  // namespace prof
