#include "trace_step.h"

#include "lj_build.h"
#include "lj_layout.h"
#include "safe_read.h"
#include "universe.h"

/* Traces looked at for pc beyond the running one: a bound on a sample's cost. */
#define TRACES_SCANNED 4096

/* Whether trace traceno of the trace array holds pc; its spadjust then. */
static int trace_holds(uint64_t trace, uint32_t traceno, uint64_t pc, uint16_t *spadjust) {
  const struct LjLayout *o = lj_build->layout;
  uint64_t at = 0;
  char T[LJ_COPY_MAX];
  if (!lj_safe_read(&at, (const char *)(uintptr_t)trace + (size_t)o->ref * traceno, o->ref) ||
      !(at &= o->ref_mask) || !lj_safe_read(T, (const void *)(uintptr_t)at, o->T_size) ||
      lj_gct(T, o) != LJ_GCT_TRACE)
    return 0;
  const uint64_t lo = lj_u64(T, o->T_mcode);
  /* (<=: a call at the trace's last instruction returns just past it) */
  if (pc < lo || pc > lo + lj_u32(T, o->T_szmcode)) return 0;
  *spadjust = lj_u16(T, o->T_spadjust);
  return 1;
}

int trace_step(uint64_t pc, uint64_t sp, uint64_t *vm_pc, uint64_t *vm_sp) {
  const struct Universe *u = lj_thread_universe;
  const char *g = u ? __atomic_load_n(&u->g, __ATOMIC_ACQUIRE) : NULL;
  if (!g || !u->code.lo || !lj_build) return 0;
  const char *J = lj_jit_state(g);
  int32_t vmstate = 0;
  uint64_t trace = 0;
  uint32_t sizetrace = 0;
  if (!lj_safe_read(&vmstate, g + lj_build->g_vmstate, sizeof vmstate) ||
      !lj_safe_read(&trace, J + lj_build->j_trace, sizeof trace) || !trace ||
      !lj_safe_read(&sizetrace, J + lj_build->j_sizetrace, sizeof sizetrace))
    return 0;
  uint16_t spadjust = 0;
  int found = vmstate > 0 && (uint32_t)vmstate < sizetrace &&
              trace_holds(trace, (uint32_t)vmstate, pc, &spadjust);
  for (uint32_t n = 1; !found && n < sizetrace && n <= TRACES_SCANNED; n++)
    found = trace_holds(trace, n, pc, &spadjust);
  if (!found) return 0;
  *vm_pc = u->code.lo + 16; /* (inside the VM, also as a return address) */
  *vm_sp = sp + spadjust + LJ_TRACE_ENTRY_SAVE;
  return 1;
}
