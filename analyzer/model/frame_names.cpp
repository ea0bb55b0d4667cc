#include "model/frame_names.h"

#include <array>
#include <cctype>

namespace prof {
namespace {

constexpr std::string_view kOperator = "operator";

// After "operator" at `at`: the end of the operator's name ("operator<<",
// "operator->*", "operator new", "operator bool"), or `at` if none starts there.
size_t operator_end(std::string_view name, size_t at) {
  if (name.compare(at, kOperator.size(), kOperator) != 0) return at;
  if (at > 0 && name[at - 1] != ':' && name[at - 1] != ' ') return at;  // "my_operator"
  size_t end = at + kOperator.size();
  if (end < name.size() && std::string_view("<>=-*+/%^&|!~,[(").find(name[end]) != std::string_view::npos) {
    // A symbol; "operator()" and "operator[]" keep their brackets.
    if (name.compare(end, 2, "()") == 0 || name.compare(end, 2, "[]") == 0) return end + 2;
    while (end < name.size() && std::string_view("<>=-*+/%^&|!~,").find(name[end]) != std::string_view::npos)
      end++;
    return end;
  }
  while (end < name.size() && name[end] == ' ') end++;
  while (end < name.size() && (isalnum(static_cast<unsigned char>(name[end])) || name[end] == '_'))
    end++;
  if (name.compare(end, 2, "[]") == 0) end += 2;  // operator new[]
  return end;
}

// The function's qualified name: no parameters, no return type.
std::string_view qualified(std::string_view f) {
  int depth = 0;
  size_t start = 0, end = f.size();
  for (size_t i = 0; i < f.size(); i++) {
    if (const size_t op = operator_end(f, i); op != i) {
      i = op - 1;
      continue;
    }
    const char c = f[i];
    if (c == '<' || c == '{') depth++;
    if (c == '>' || c == '}') depth--;
    if (depth == 0 && c == ' ') start = i + 1;  // a return type before it
    if (depth == 0 && c == '(' && f.compare(i, 21, "(anonymous namespace)") != 0) {
      end = i;
      break;
    }
  }
  if (start >= end) start = 0;
  return f.substr(start, end - start);
}

bool starts_with(std::string_view s, std::string_view p) { return s.compare(0, p.size(), p) == 0; }

}  // namespace

std::string short_name(std::string_view f) {
  if (f.find('<') == std::string_view::npos) return std::string(f);
  std::string out;
  out.reserve(f.size());
  int depth = 0;
  for (size_t i = 0; i < f.size(); i++) {
    if (const size_t op = operator_end(f, i); op != i) {
      if (depth == 0) out.append(f.substr(i, op - i));
      i = op - 1;
      continue;
    }
    const char c = f[i];
    if (c == '<') {
      if (depth++ == 0) out += "<…>";
      continue;
    }
    if (c == '>') {
      if (--depth < 0) return std::string(f);
      continue;
    }
    if (depth == 0) out += c;
  }
  return depth == 0 ? out : std::string(f);
}

std::string function_name(const Frame &f) {
  if (f.kind != Frame::Kind::Guest || f.file.empty()) return f.function;
  const std::string where = f.file + ":" + std::to_string(f.first_line);
  // A Lua frame named by its location only, or by its function's name (the
  // main chunk's by its chunk alone: it starts at no line).
  if (starts_with(f.function, f.file)) return where;
  return f.function.substr(0, f.function.find(" (")) + " (" + (f.first_line ? where : f.file) + ")";
}

bool is_allocator_function(std::string_view function) {
  static constexpr std::array<std::string_view, 9> kScopes = {
      "operator new",           "std::allocator<",          "std::allocator_traits<",
      "std::__new_allocator<",  "__gnu_cxx::new_allocator<", "std::__allocator_traits_base",
      "__gnu_cxx::__alloc_traits<", "std::__allocate_guarded", "std::__detail::_Hashtable_alloc<"};
  static constexpr std::array<std::string_view, 13> kCFunctions = {
      "malloc",        "calloc",         "realloc",        "reallocarray", "aligned_alloc",
      "memalign",      "posix_memalign", "valloc",         "pvalloc",      "__libc_malloc",
      "__libc_calloc", "__libc_realloc", "__libc_memalign"};
  // The guest adapters' lua_Alloc wrappers (preload/lua54, preload/luajit):
  // the profiler's own layer between a Lua VM and its allocator.
  static constexpr std::array<std::string_view, 3> kAdapterAllocators = {
      "publishing_alloc", "typing_alloc", "profiling_alloc"};
  const std::string_view name = qualified(function);
  for (std::string_view c : kCFunctions)
    if (name == c) return true;
  for (std::string_view c : kAdapterAllocators)
    if (name == c) return true;
  for (std::string_view s : kScopes)
    if (starts_with(name, s)) return true;
  // The containers' allocation helpers: _Vector_base::_M_allocate,
  // _Rb_tree::_M_get_node, _Hashtable_alloc::_M_allocate_node, ...
  const size_t colon = name.rfind("::");
  if (colon == std::string_view::npos || !starts_with(name, "std::")) return false;
  const std::string_view member = name.substr(colon + 2);
  return starts_with(member, "_M_allocate") || starts_with(member, "_M_get_node");
}

}  // namespace prof
