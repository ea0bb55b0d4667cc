// A C++ program (built -O2 -g) whose allocations go through the standard
// library's allocators, with counts known by construction, for the tables'
// names and stacks (test/analyzer_tables.cpp). Modes, by argv[1]:
//   vectors: 100 vectors of int grown by push_back to 1000 elements:
//     11 allocations each (capacities 1, 2, 4, ... 1024), in
//     std::vector<int>::_M_realloc_insert called from grow_vectors;
//     then 50 x `new Node` in make_nodes, all kept (leaked).
//   realloc: 100 x (malloc 16, realloc 32, realloc 4096, free) in churn.
//   mmap: 3 x map_big (1 MiB, 2 MiB, 4 MiB mapped at once, then unmapped),
//     then 1 x map_small (64 KiB, kept).
//   small: 100000 x (malloc 64, free).
//   spin: about a second of CPU in burn(), in two loops on two lines.
#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

struct Node {
  Node *next;
  char payload[40];
};

Node *volatile kept;
void *volatile sink;

__attribute__((noinline)) void grow_vectors() {
  for (int v = 0; v < 100; v++) {
    std::vector<int> values;
    for (int i = 0; i < 1000; i++) values.push_back(i);
    sink = values.data();
  }
}

__attribute__((noinline)) void make_nodes() {
  for (int i = 0; i < 50; i++) {
    Node *n = new Node;
    n->next = kept;
    kept = n;
  }
}

__attribute__((noinline)) void churn() {
  for (int i = 0; i < 100; i++) {
    void *p = malloc(16);
    sink = p;
    p = realloc(p, 32);
    sink = p;
    p = realloc(p, 4096);
    sink = p;
    free(p);
  }
}

__attribute__((noinline)) void *map_bytes(size_t n) {
  void *p = mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? nullptr : p;
}

__attribute__((noinline)) void map_big() {
  void *a = map_bytes(1 << 20), *b = map_bytes(2 << 20), *c = map_bytes(4 << 20);
  munmap(c, 4 << 20);
  munmap(b, 2 << 20);
  munmap(a, 1 << 20);
}

__attribute__((noinline)) void map_small() { sink = map_bytes(64 << 10); }

__attribute__((noinline)) unsigned burn() {
  volatile unsigned x = 0;
  for (int round = 0; round < 40; round++) {
    for (unsigned i = 0; i < 2000000; i++) x = x + i * 3;
    for (unsigned i = 0; i < 2000000; i++) x = x ^ (i << 1);
  }
  return x;
}

int main(int argc, char **argv) {
  if (argc < 2) return 2;
  if (!strcmp(argv[1], "vectors")) {
    grow_vectors();
    make_nodes();
  } else if (!strcmp(argv[1], "realloc")) {
    churn();
  } else if (!strcmp(argv[1], "small")) {
    for (int i = 0; i < 100000; i++) {
      void *p = malloc(64);
      sink = p;
      free(p);
    }
  } else if (!strcmp(argv[1], "spin")) {
    sink = reinterpret_cast<void *>(uintptr_t(burn()));
  } else if (!strcmp(argv[1], "mmap")) {
    for (int i = 0; i < 3; i++) map_big();
    map_small();
  } else {
    return 2;
  }
  return 0;
}
