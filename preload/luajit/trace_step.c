#include "trace_step.h"

#include "lj_build.h"
#include "lj_layout.h"
#include "safe_read.h"
#include "universe.h"

/* Traces looked at for pc beyond the running one: a bound on a sample's cost. */
#define TRACES_SCANNED 4096

/* Whether trace traceno of the trace array holds pc. */
static int trace_holds(uint64_t trace, uint32_t traceno, uint64_t pc) {
  const struct LjLayout *o = lj_build->layout;
  uint64_t at = 0;
  char T[LJ_COPY_MAX];
  if (!lj_safe_read(&at, (const char *)(uintptr_t)trace + (size_t)o->ref * traceno, o->ref) ||
      !(at &= o->ref_mask) || !lj_safe_read(T, (const void *)(uintptr_t)at, o->T_size) ||
      lj_gct(T, o) != LJ_GCT_TRACE)
    return 0;
  const uint64_t lo = lj_u64(T, o->T_mcode);
  /* (<=: a call at the trace's last instruction returns just past it) */
  return pc >= lo && pc <= lo + lj_u32(T, o->T_szmcode);
}

/* Whether pc lies in a trace of the VM of g: the running one (vmstate)
** first, then every trace. */
static int in_trace(const char *g, uint64_t pc) {
  const char *J = lj_jit_state(g);
  int32_t vmstate = 0;
  uint64_t trace = 0;
  uint32_t sizetrace = 0;
  if (!lj_safe_read(&vmstate, g + lj_build->g_vmstate, sizeof vmstate) ||
      !lj_safe_read(&trace, J + lj_build->j_trace, sizeof trace) || !trace ||
      !lj_safe_read(&sizetrace, J + lj_build->j_sizetrace, sizeof sizetrace))
    return 0;
  if (vmstate > 0 && (uint32_t)vmstate < sizetrace && trace_holds(trace, (uint32_t)vmstate, pc))
    return 1;
  for (uint32_t n = 1; n < sizetrace && n <= TRACES_SCANNED; n++)
    if (trace_holds(trace, n, pc)) return 1;
  return 0;
}

/* Cframes followed from the running state's innermost one. */
#define CFRAMES_FOLLOWED 16
/* How far below its cframe the VM's code may keep the stack pointer: the
** exit handler's saved registers and a trace's spill slots. */
#define VM_FRAME_LOWERED_MAX (64 * 1024)

/* The frame at sp of the VM's code or of a trace, stepped to the running
** state's innermost cframe above it; 0 when sp is a cframe (the table's
** case) or no cframe lies above it. */
static int vm_frame_step(const char *g, const struct VmCode *code, uint64_t sp,
                         uint64_t *vm_pc, uint64_t *vm_sp) {
  const struct LjLayout *o = lj_build->layout;
  const uint64_t L = lj_g_ref(g, lj_build->g_cur_L);
  uint64_t cf = 0;
  if (!L || !lj_safe_read(&cf, (const char *)(uintptr_t)L + o->L_cframe, sizeof cf)) return 0;
  for (int i = 0; i < CFRAMES_FOLLOWED && (cf &= LJ_CFRAME_RAWMASK); i++) {
    if (cf == sp) return 0;
    if (cf > sp) {
      if (cf - sp > VM_FRAME_LOWERED_MAX) return 0;
      *vm_pc = code->lo + 16; /* (inside the VM, also as a return address) */
      *vm_sp = cf;
      return 1;
    }
    if (!lj_safe_read(&cf, (const char *)(uintptr_t)cf + o->cf_prev, sizeof cf)) return 0;
  }
  return 0;
}

int trace_step(uint64_t pc, uint64_t sp, int covered, uint64_t *vm_pc, uint64_t *vm_sp) {
  const struct Universe *u = lj_thread_universe;
  const char *g = u ? __atomic_load_n(&u->g, __ATOMIC_ACQUIRE) : NULL;
  if (!g || !u->code.lo || !lj_build) return 0;
  if (covered ? pc < u->code.lo || pc >= u->code.hi : !in_trace(g, pc)) return 0;
  return vm_frame_step(g, &u->code, sp, vm_pc, vm_sp);
}
