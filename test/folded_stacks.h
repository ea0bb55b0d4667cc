// folded_stacks(): `prof-analyze folded FILE` read back as stack -> samples,
// for the end-to-end tests of CPU streams (cpu, attach).
#pragma once

#include <cstdio>
#include <map>
#include <string>

#include <catch2/catch.hpp>

inline std::map<std::string, double> folded_stacks(const std::string &analyzer, const std::string &file) {
  std::map<std::string, double> stacks;
  FILE *f = popen((analyzer + " folded " + file + " 2>/dev/null").c_str(), "r");
  REQUIRE(f);
  char line[1 << 16];
  while (fgets(line, sizeof line, f)) {
    std::string s(line);
    const size_t space = s.rfind(' ');
    if (space != std::string::npos) stacks[s.substr(0, space)] += std::stod(s.substr(space + 1));
  }
  pclose(f);
  return stacks;
}
