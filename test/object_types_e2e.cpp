// Memory by object type end to end: the stock lua5.4 with `-l prof_lua`
// under libprof.so makes known numbers of tables and strings
// (e2e/object_types.lua); prof-analyze's summary and folded --by-type must
// give them by type. The interpreter allocates on its own too, so the runs
// are compared: the difference between two runs is what the script made.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "agent_run.h"

using Json = nlohmann::json;

namespace {

const std::string kScript = PROF_OBJECT_TYPES_LUA;

RunResult analyze(std::vector<std::string> args) {
  args.insert(args.begin(), PROF_ANALYZER_PATH);
  return run_bare(args);
}

struct TypedRun {
  RunResult run;
  std::map<std::string, Json> types;  // summary's object_types by type
};

TypedRun run_script(int ntables, int nstrings) {
  setenv("LUA_CPATH", PROF_LUA_MODULE_DIR "/?.so", 1);
  TypedRun t;
  t.run = run_under_agent(
      {"lua5.4", "-l", "prof_lua", kScript, std::to_string(ntables), std::to_string(nstrings)});
  REQUIRE(t.run.exit_code == 0);
  REQUIRE(t.run.memprof_files.size() == 1);
  const RunResult s = analyze({"summary", "--json", t.run.memprof_files[0]});
  REQUIRE(s.exit_code == 0);
  const Json j = Json::parse(s.out);
  REQUIRE(j["memory"]["object_types"].is_array());
  for (const Json &row : j["memory"]["object_types"]) t.types[row["type"]] = row;
  return t;
}

double figure(const TypedRun &t, const std::string &type, const char *field) {
  const auto it = t.types.find(type);
  return it == t.types.end() ? 0 : it->second[field].get<double>();
}

}  // namespace

TEST_CASE("object types e2e: N tables and M strings of lua5.4, by type in the summary",
          "[types]") {
  const TypedRun small = run_script(1000, 500);
  const TypedRun large = run_script(3000, 2500);
  auto more = [&](const std::string &type, const char *field) {
    return figure(large, type, field) - figure(small, type, field);
  };
  // Each table is one 56-byte Table; each string one 65-byte TString.
  CHECK(more("table", "alloc_count") == 2000);
  CHECK(more("table", "alloc_bytes") == 2000 * 56);
  CHECK(more("string", "alloc_count") == 2000);
  CHECK(more("string", "alloc_bytes") == 2000 * 65);
  // All kept, the garbage collected, the state never closed: they leak.
  CHECK(more("table", "leaked_blocks") == 2000);
  CHECK(more("table", "leaked_bytes") == 2000 * 56);
  CHECK(more("string", "leaked_blocks") == 2000);
  CHECK(more("string", "leaked_bytes") == 2000 * 65);
  // At the peak every kept one was live, and at most the interpreter's own.
  for (const TypedRun *t : {&small, &large}) {
    const double made = t == &small ? 1000 : 3000;
    CHECK(figure(*t, "table", "peak_blocks") >= made);
    CHECK(figure(*t, "table", "peak_blocks") <= figure(*t, "table", "alloc_count"));
  }
  // The script's functions, prototypes and untagged memory (table parts)
  // are typed too; what the interpreter allocated before prof_lua was
  // loaded, and the C library's own blocks, are untyped.
  CHECK(figure(small, "function", "alloc_count") > 0);
  CHECK(figure(small, "proto", "alloc_count") > 0);
  CHECK(figure(small, "other", "alloc_count") > 0);
  CHECK(figure(small, "untyped", "alloc_count") > 0);

  const RunResult text = analyze({"summary", "--full", small.run.memprof_files[0]});
  REQUIRE(text.exit_code == 0);
  CHECK(text.out.find("OBJECT TYPES") != std::string::npos);
}

TEST_CASE("object types e2e: folded --by-type puts the type at the leaf", "[types]") {
  const TypedRun t = run_script(700, 300);
  const RunResult folded = analyze(
      {"folded", "--by-type", "--metric", "alloc-count", t.run.memprof_files[0]});
  REQUIRE(folded.exit_code == 0);
  // The stacks through each maker's loop (its Lua frame, named by its
  // function, then the leaf or string.format), by leaf.
  std::map<std::string, double> tables_by_leaf, strings_by_leaf;
  std::istringstream lines(folded.out);
  for (std::string line; std::getline(lines, line);) {
    const size_t space = line.rfind(' ');
    const std::string stack = line.substr(0, space);
    const double count = std::stod(line.substr(space + 1));
    const std::string leaf = stack.substr(stack.rfind(';') + 1);
    if (stack.find(";make_tables (@" PROF_OBJECT_TYPES_LUA ":9);") != std::string::npos)
      tables_by_leaf[leaf] += count;
    if (stack.find(";make_strings (@" PROF_OBJECT_TYPES_LUA ":13);") != std::string::npos)
      strings_by_leaf[leaf] += count;
  }
  CHECK(tables_by_leaf["[table]"] == 700);
  CHECK(strings_by_leaf["[string]"] == 300);
  CHECK(tables_by_leaf.count("[string]") == 0);
  CHECK(strings_by_leaf.count("[table]") == 0);

  // Without --by-type no leaf is a type.
  const RunResult plain = analyze({"folded", "--metric", "alloc-count", t.run.memprof_files[0]});
  REQUIRE(plain.exit_code == 0);
  CHECK(plain.out.find("[table]") == std::string::npos);
}
