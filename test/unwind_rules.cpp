// find_unwind_rule on code whose CFI the tests write themselves: OpenSSL's
// form of a CFA kept in a stack slot (*(rsp + off) + 8), and code that no
// FDE covers (what JIT code looks like), which the signal walk steps by its
// frame pointer.
#include <catch2/catch.hpp>

#include <cstdint>

#include "unwind_rule.h"

using prof::UnwindRule;

extern "C" char prof_test_saved_sp_body[], prof_test_no_cfi[];

// The first function keeps the caller's rsp at rsp + 16, as OpenSSL's
// assembly does (.cfi_cfa_expression %rsp+16,deref,+8); the second has no
// CFI at all. Neither is called.
asm(R"(
  .text
  .type prof_test_saved_sp, @function
prof_test_saved_sp:
  .cfi_startproc
  mov %rsp, %rax
  .cfi_def_cfa_register %rax
  sub $32, %rsp
  mov %rax, 16(%rsp)
  .cfi_escape 0x0f, 0x05, 0x77, 0x10, 0x06, 0x23, 0x08
  .globl prof_test_saved_sp_body
prof_test_saved_sp_body:
  nop
  mov 16(%rsp), %rsp
  .cfi_def_cfa_register %rsp
  ret
  .cfi_endproc
  .size prof_test_saved_sp, .-prof_test_saved_sp
  .globl prof_test_no_cfi
  .type prof_test_no_cfi, @function
prof_test_no_cfi:
  nop
  ret
  .size prof_test_no_cfi, .-prof_test_no_cfi
)");

TEST_CASE("a CFA saved in a stack slot is read, and stepped through that slot") {
  const UnwindRule r = prof::find_unwind_rule(reinterpret_cast<uint64_t>(prof_test_saved_sp_body));
  REQUIRE(r.cfa == UnwindRule::kRspDeref);
  CHECK(r.cfa_off == 16);
  CHECK(r.cfa_add == 8);
  CHECK(r.ra_off == -8);
  // A stack: the saved rsp at sp + 16 points at the return address.
  uint64_t stack[8] = {};
  stack[2] = reinterpret_cast<uint64_t>(&stack[4]);
  stack[4] = 0x1234;
  prof::CallSite at{0, reinterpret_cast<uint64_t>(&stack[0]), 0};
  prof::RuleReads reads;
  const uint64_t lo = reinterpret_cast<uint64_t>(&stack[0]), hi = reinterpret_cast<uint64_t>(&stack[8]);
  REQUIRE(prof::apply_unwind_rule(r, at, lo, hi, reads) == 1);
  CHECK(at.ip == 0x1234);
  CHECK(at.sp == reinterpret_cast<uint64_t>(&stack[5]));
}

TEST_CASE("code no FDE covers is told apart from a rule the walk cannot read") {
  CHECK(prof::find_unwind_rule(reinterpret_cast<uint64_t>(prof_test_no_cfi)).cfa == UnwindRule::kNoTable);
  // Outside every object (JIT code's place).
  CHECK(prof::find_unwind_rule(0x1000).cfa == UnwindRule::kNoTable);
  // The frame-pointer rule: [rbp] the caller's rbp, [rbp + 8] the return address.
  uint64_t stack[4] = {0, 0, 0x5678, 0x9abc};
  const uint64_t rbp = reinterpret_cast<uint64_t>(&stack[1]);
  stack[1] = 0x42;
  prof::CallSite at{0, reinterpret_cast<uint64_t>(&stack[0]), rbp};
  prof::RuleReads reads;
  REQUIRE(prof::apply_unwind_rule(prof::kFramePointerRule, at, at.sp,
                                  reinterpret_cast<uint64_t>(&stack[4]), reads) == 1);
  CHECK(at.ip == 0x5678);
  CHECK(at.rbp == 0x42);
  CHECK(at.sp == reinterpret_cast<uint64_t>(&stack[3]));
}
