// Locating ../shared/fixtures/luajit; a test that needs it and finds it absent
// exits with code 4, which CTest reports as skipped (never as passed).
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>
#include <sys/stat.h>

inline std::string fixture(const std::string &name) {
  const std::string path = std::string(PROF_FIXTURES_DIR) + "/" + name;
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    std::fprintf(stderr, "SKIPPED: fixture %s is absent (no ../shared beside the clone)\n",
                 path.c_str());
    std::exit(4);
  }
  return path;
}
