// A C++ library built without debug information, for the symbolizer tests:
// its functions are named by the ELF symbol table only, demangled.
namespace analyzer_test {

__attribute__((noinline)) void *return_address() { return __builtin_return_address(0); }

// The return address it returns lies in analyzer_test::caller(int).
__attribute__((noinline)) void *caller(int) {
  void *ra = return_address();
  __asm__ volatile("" ::: "memory");
  return ra;
}

}  // namespace analyzer_test

extern "C" void *analyzer_mangled_call() { return analyzer_test::caller(1); }
