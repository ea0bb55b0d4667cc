// The stacks `prof-analyze folded` prints, read back for the end-to-end tests.
#pragma once

#include <catch2/catch.hpp>

#include <cstdio>
#include <map>
#include <string>
#include <vector>

using FoldedStack = std::vector<std::string>;  // root first

// `prof-analyze folded ARGS`: stack -> count.
inline std::map<FoldedStack, double> folded(const std::string &args) {
  std::map<FoldedStack, double> stacks;
  FILE *f = popen((std::string(PROF_ANALYZER_PATH) + " folded " + args + " 2>/dev/null").c_str(), "r");
  REQUIRE(f);
  static char line[1 << 20];
  while (fgets(line, sizeof line, f)) {
    std::string s(line);
    const size_t space = s.rfind(' ');
    if (space == std::string::npos) continue;
    FoldedStack st;
    for (size_t at = 0; at < space;) {
      size_t semi = s.find(';', at);
      if (semi == std::string::npos || semi > space) semi = space;
      st.push_back(s.substr(at, semi - at));
      at = semi + 1;
    }
    stacks[st] += std::stod(s.substr(space + 1));
  }
  pclose(f);
  return stacks;
}
