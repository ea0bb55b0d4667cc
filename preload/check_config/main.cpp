// prof-check-config: the agent's settings checked before a program runs.
//
// Reads the PROF_* variables of its environment with the agent's own parser
// (config.cpp), so prof-run refuses a bad value with the agent's words
// instead of running the program unprofiled. Exit 0 when the agent would
// take them; else 2 with the agent's one line on stderr ("invalid
// PROF_DEPTH='0' (expected 1..1024)").
#include <unistd.h>

#include <cstdio>

#include "config.h"

int main() {
  prof::Config cfg;
  if (prof::parse_config(environ, &cfg)) return 0;
  fprintf(stderr, "%s\n", cfg.error);
  return 2;
}
