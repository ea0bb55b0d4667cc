// LuaFunctionNames: the names of Lua functions, read from their chunks'
// source at the line each function is defined on, as Lua profilers name
// them: the VM keeps no name for a function (in Lua a name belongs to a
// call, not to the function), but the source says it (`function M.foo(`,
// `local function foo(`, `foo = function(`).
//
// Invariants: a chunk's file is read once, whatever the number of lookups
// (a missing, unreadable or oversized one is remembered as such); only chunk
// names of files ("@path") are read, a relative path only against the
// working directory the stream recorded; a line that defines no named
// function, or more than one function, gives no name (the caller keeps the
// location); nothing here throws for what a file holds.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace prof {

class LuaFunctionNames {
 public:
  // The directory relative chunk names start from (the stream's working-dir).
  void set_working_dir(std::string dir) { working_dir_ = std::move(dir); }

  // The name of the function of `chunk` defined at `first_line`
  // ("BottomUpTree", "M.foo", "obj:method"), "(main chunk)" for line 0, or
  // empty when the source does not say (or cannot be read).
  const std::string &name(const std::string &chunk, uint32_t first_line);

 private:
  // Names by line (index 0: the main chunk); empty for an unreadable file.
  using ChunkNames = std::vector<std::string>;
  ChunkNames read_chunk(const std::string &chunk) const;

  std::string working_dir_;
  std::unordered_map<std::string, ChunkNames> chunks_;
};

// The function a line of Lua source defines, by the forms above; empty when
// it defines none, an anonymous one, or several.
std::string lua_defined_name(const std::string &line);

}  // namespace prof
