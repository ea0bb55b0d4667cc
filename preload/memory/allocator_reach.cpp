#include "memory/allocator_reach.h"

#include <cstring>
#include <dlfcn.h>
#include <link.h>
#include <sys/auxv.h>

#include "agent.h"

namespace prof {

void say_if_allocator_hidden() {
  Dl_info own{};
  if (!dladdr(reinterpret_cast<void *>(&say_if_allocator_hidden), &own)) return;
  static const char *const kNames[] = {"malloc", "free", "calloc", "realloc"};
  const char *found[4];
  size_t count = 0;
  Dl_info owner{};
  for (const char *name : kNames) {
    Dl_info info{};
    ElfW(Sym) *sym = nullptr;
    void *f = dlsym(RTLD_DEFAULT, name);
    // XXX: a non-PIE executable that takes the function's address has its
    // PLT stub found first (the function's canonical address), which calls
    // the agent's all the same: only a definition there takes the calls.
    if (!f || !dladdr1(f, &info, reinterpret_cast<void **>(&sym), RTLD_DL_SYMENT) ||
        info.dli_fbase == own.dli_fbase || !sym || sym->st_shndx == SHN_UNDEF ||
        info.dli_saddr != f)
      continue;
    if (count == 0) owner = info;
    found[count++] = name;
  }
  if (count == 0) return;
  char names[64] = "";
  for (size_t i = 0; i < count; i++) {
    if (i > 0) strcat(names, i + 1 == count ? " and " : ", ");
    strcat(names, found[i]);
  }
  // (dladdr names the executable by argv[0]: its entry point tells it.)
  Dl_info program{};
  const bool executable = dladdr(reinterpret_cast<void *>(getauxval(AT_ENTRY)), &program) &&
                          program.dli_fbase == owner.dli_fbase;
  const char *who = executable ? reinterpret_cast<const char *>(getauxval(AT_EXECFN)) : owner.dli_fname;
  say(executable ? "the executable " : "", who,
      executable ? " defines its own " : ", loaded before the agent, defines ", names,
      ": the agent cannot see those calls, and the blocks they make are not recorded");
}

}  // namespace prof
