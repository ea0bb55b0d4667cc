// Lua function names read from source (read/lua_function_names.h): each form
// a definition line can take, the lines that must name nothing, and a
// chunk's file read once, found by absolute path or through the working
// directory, never through the analyzer's own.
#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <string>

#include "read/lua_function_names.h"
#include "temp_files.h"

using prof::lua_defined_name;
using prof::LuaFunctionNames;

TEST_CASE("a definition line names its function in each form Lua code uses") {
  CHECK(lua_defined_name("function BottomUpTree(depth)") == "BottomUpTree");
  CHECK(lua_defined_name("  local function build(depth)") == "build");
  CHECK(lua_defined_name("function M.sub.make(n) -- a module's") == "M.sub.make");
  CHECK(lua_defined_name("function object:method(n)") == "object:method");
  CHECK(lua_defined_name("local make = function(n)") == "make");
  CHECK(lua_defined_name("M.handler = function (n)") == "M.handler");
  CHECK(lua_defined_name("  on_event = function(e)") == "on_event");  // a table's field
  CHECK(lua_defined_name("local t = { cb = function() return 1 end }") == "cb");
}

TEST_CASE("a line that does not say which function, or defines none, names nothing") {
  CHECK(lua_defined_name("table.sort(t, function(a, b) return a < b end)") == "");
  CHECK(lua_defined_name("return function(x) return x end") == "");
  CHECK(lua_defined_name("local f = function() return function() end end") == "");  // two
  CHECK(lua_defined_name("if x == function() end then") == "");
  CHECK(lua_defined_name("local a, b = function() end, 1") == "");
  CHECK(lua_defined_name("t[\"key\"] = function() end") == "");
  CHECK(lua_defined_name("local functions = {}") == "");
  CHECK(lua_defined_name("-- function commented()") == "");
  CHECK(lua_defined_name("") == "");
}

TEST_CASE("a chunk's names come from its file, read once, relative ones from the working dir") {
  TempDir dir;
  std::ofstream(dir / "m.lua") << "local M = {}\n"
                                  "function M.run(n)\n"
                                  "  return n\n"
                                  "end\n"
                                  "table.sort({}, function(a, b) return a < b end)\n";
  LuaFunctionNames names;
  // Relative, without a working directory: nothing is read.
  CHECK(names.name("@m.lua", 2) == "");
  LuaFunctionNames from_dir;
  from_dir.set_working_dir(dir.path);
  CHECK(from_dir.name("@m.lua", 2) == "M.run");
  CHECK(from_dir.name("@m.lua", 0) == "(main chunk)");
  CHECK(from_dir.name("@m.lua", 5) == "");  // anonymous
  CHECK(from_dir.name("@m.lua", 99) == "");  // past the end
  // Absolute, and read once: the file's later fate changes nothing.
  CHECK(names.name("@" + dir.path + "/m.lua", 2) == "M.run");
  std::remove((dir / "m.lua").c_str());
  CHECK(names.name("@" + dir.path + "/m.lua", 2) == "M.run");
  // Missing files, directories and strings loaded as code name nothing.
  CHECK(names.name("@" + dir.path + "/m.lua", 0) == "(main chunk)");
  CHECK(names.name("@" + dir.path + "/gone.lua", 0) == "");
  CHECK(names.name("@" + dir.path, 0) == "");
  CHECK(names.name("=stdin", 0) == "");
  CHECK(names.name("return 1", 0) == "");
}
