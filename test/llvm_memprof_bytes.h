// Raw MemProf profiles written byte by byte from the grammar of
// format/llvm_memprof.h, for tests of the reader: the test's own writer, so
// a misreading of the layout on one side shows as a mismatch with the other
// and with the runtime's files (llvm_memprof_e2e.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace llvm_memprof_test {

struct Segment {
  uint64_t start, end, offset;
  std::string build_id;
};
struct Mib {
  uint64_t stack_id;
  uint32_t alloc_count;
  uint64_t total_access, total_size;
  uint32_t min_size, max_size;
  uint64_t total_lifetime;
  uint32_t migrations = 0, overlaps = 0;
  uint32_t histogram = 0;  // version 4: buckets written after the record
};
struct Stack {
  uint64_t id;
  std::vector<uint64_t> pcs;
};

class ProfileBytes {
 public:
  explicit ProfileBytes(uint64_t version) : version_(version) {}

  std::vector<uint8_t> build(const std::vector<Segment> &segments, const std::vector<Mib> &mibs,
                             const std::vector<Stack> &stacks) {
    std::vector<uint8_t> seg, mib, stk;
    u64(seg, segments.size());
    for (const Segment &s : segments) {
      u64(seg, s.start);
      u64(seg, s.end);
      u64(seg, s.offset);
      if (version_ != 1) u64(seg, s.build_id.size());
      std::string id = s.build_id;
      id.resize(32, '\0');
      seg.insert(seg.end(), id.begin(), id.end());
    }
    u64(mib, mibs.size());
    for (const Mib &m : mibs) {
      u64(mib, m.stack_id);
      u32(mib, m.alloc_count);
      u64(mib, m.total_access);
      u64(mib, m.alloc_count ? m.total_access / m.alloc_count : 0);  // min
      u64(mib, m.alloc_count ? m.total_access / m.alloc_count : 0);  // max
      u64(mib, m.total_size);
      u32(mib, m.min_size);
      u32(mib, m.max_size);
      u32(mib, 5);  // alloc-ts
      u32(mib, 9);  // dealloc-ts
      u64(mib, m.total_lifetime);
      u32(mib, uint32_t(m.alloc_count ? m.total_lifetime / m.alloc_count : 0));
      u32(mib, uint32_t(m.alloc_count ? m.total_lifetime / m.alloc_count : 0));
      u32(mib, 1);  // alloc-cpu
      u32(mib, 1);  // dealloc-cpu
      u32(mib, m.migrations);
      u32(mib, m.overlaps);
      u32(mib, 0);
      u32(mib, 0);
      u64(mib, 0);  // data-type-id
      if (version_ >= 3) {
        u64(mib, 7);
        u32(mib, 7);
        u32(mib, 7);
        u64(mib, 7);
        u32(mib, 7);
        u32(mib, 7);
      }
      if (version_ >= 4) {
        u32(mib, m.histogram);
        u64(mib, 0xdeadbeef);
        for (uint32_t i = 0; i < m.histogram; i++) u64(mib, i);
      }
    }
    u64(stk, stacks.size());
    for (const Stack &s : stacks) {
      u64(stk, s.id);
      u64(stk, s.pcs.size());
      for (uint64_t pc : s.pcs) u64(stk, pc);
    }
    pad(seg);
    pad(mib);
    pad(stk);
    std::vector<uint8_t> out;
    u64(out, 0xff6d70726f667281ull);
    u64(out, version_);
    u64(out, 48 + seg.size() + mib.size() + stk.size());
    u64(out, 48);
    u64(out, 48 + seg.size());
    u64(out, 48 + seg.size() + mib.size());
    out.insert(out.end(), seg.begin(), seg.end());
    out.insert(out.end(), mib.begin(), mib.end());
    out.insert(out.end(), stk.begin(), stk.end());
    return out;
  }

 private:
  static void u64(std::vector<uint8_t> &b, uint64_t v) {
    for (int i = 0; i < 8; i++) b.push_back(uint8_t(v >> (8 * i)));
  }
  static void u32(std::vector<uint8_t> &b, uint32_t v) {
    for (int i = 0; i < 4; i++) b.push_back(uint8_t(v >> (8 * i)));
  }
  static void pad(std::vector<uint8_t> &b) {
    while (b.size() % 8) b.push_back(0);
  }
  uint64_t version_;
};

}  // namespace llvm_memprof_test
