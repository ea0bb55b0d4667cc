// LLVM MemProf raw profiles: what clang's `-fmemory-profile` runtime
// (compiler-rt/lib/memprof) writes at exit, read here, never written.
// Versions 1 (clang 14), 3 (clang 18) and 4 (clang 19); every integer is
// little-endian, every offset counts from the start of its profile.
//
// file     := profile+                   (runs of one file may be concatenated)
// profile  := header pad segments pad mibs pad stacks pad
// header   := magic version total-size segment-offset mib-offset stack-offset
// magic    := <U64> 0xff6d70726f667281   (bytes 81 'r' 'f' 'o' 'r' 'p' 'm' ff)
// version  := <U64> 1 | 3 | 4
// segments := segment-count segment*     (the executable mappings at exit)
// segment  := start end offset build-id-size? build-id
//             build-id-size: versions 3 and 4 only
// mibs     := mib-count mib-entry*
// mib-entry:= stack-id mib histogram?
// mib      := alloc-count total-access min-access max-access total-size
//             min-size max-size alloc-ts dealloc-ts total-lifetime
//             min-lifetime max-lifetime alloc-cpu dealloc-cpu
//             migrations lifetime-overlaps same-alloc-cpu same-dealloc-cpu
//             data-type-id density-fields? histogram-fields?
// density-fields   := total-access-density min-access-density max-access-density
//                     total-lifetime-density min-lifetime-density max-lifetime-density
//                     (versions 3 and 4)
// histogram-fields := histogram-size histogram-pointer     (version 4)
// histogram        := <U64>{histogram-size}                (version 4)
// stacks   := stack-count stack-entry*
// stack-entry := stack-id pc-count pc{pc-count}
// pad      := <BYTE>*                    (up to the next offset the header gives)
//
// Field widths: <U64> for magic, version, the sizes and offsets, counts,
// start, end, offset, build-id-size, stack-id, pc-count, pc, total-access,
// min-access, max-access, total-size, total-lifetime, data-type-id,
// total-access-density, total-lifetime-density and histogram-pointer;
// build-id is 32 bytes (the first build-id-size of them used; version 1
// leaves them all zero); every other mib field is <U32>.
//
// Meaning: offset is the mapping's file offset in version 1 and the module's
// load bias in versions 3 and 4; a pc is a return address minus 1; a mib
// sums the blocks its stack allocated (freed, or live at exit), and its
// lifetimes (ms) and timestamps (ms since start) are the runtime's clock.
// The header offsets must satisfy 48 <= segment-offset <= mib-offset <=
// stack-offset <= total-size, and each section must end by the next one.
//
// Invariants: LlvmMemprofReader streams the records in file order with
// constant memory (a stack holds at most kMaxLlvmStackPcs pcs); every count
// is checked against the bytes its section can hold before it is trusted,
// and anything else wrong throws FormatError at the offset of the value.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "byte_reader.h"

namespace prof {

constexpr uint64_t kLlvmMemprofMagic = 0xff6d70726f667281ull;
constexpr size_t kLlvmMemprofHeaderBytes = 48;
constexpr size_t kLlvmBuildIdBytes = 32;
// More pcs than any runtime keeps (its stack depot stops at 256): corruption.
constexpr uint64_t kMaxLlvmStackPcs = 4096;

// Whether the first 8 bytes of a file are the MemProf raw magic.
bool is_llvm_memprof_magic(const uint8_t (&first)[8]);
// Whether this reader knows a version.
bool llvm_memprof_version_known(uint64_t version);

struct LlvmMemprofHeader {
  uint64_t version = 0, total_size = 0;
  uint64_t segment_offset = 0, mib_offset = 0, stack_offset = 0;
};

struct LlvmMemprofSegment {
  uint64_t start = 0, end = 0;
  uint64_t offset = 0;   // version 1: file offset; later: load bias
  std::string build_id;  // raw bytes; empty in version 1
};

// One memory info block: the blocks of one allocation context.
struct LlvmMemprofMib {
  uint64_t stack_id = 0;
  uint64_t alloc_count = 0;
  uint64_t total_access = 0, min_access = 0, max_access = 0;
  uint64_t total_size = 0, min_size = 0, max_size = 0;
  uint64_t alloc_ts = 0, dealloc_ts = 0;
  uint64_t total_lifetime = 0, min_lifetime = 0, max_lifetime = 0;  // ms
  uint64_t alloc_cpu = 0, dealloc_cpu = 0;
  uint64_t migrations = 0, lifetime_overlaps = 0;
  uint64_t same_alloc_cpu = 0, same_dealloc_cpu = 0;
  uint64_t histogram_size = 0;  // version 4: buckets skipped after it
};

struct LlvmMemprofStack {
  uint64_t id = 0;
  std::vector<uint64_t> pcs;  // innermost first; return addresses minus 1
};

enum class LlvmMemprofRecord : uint8_t { Header, Segment, Mib, Stack };

// One record as LlvmMemprofReader returns it: the member `record` names.
struct LlvmMemprofItem {
  LlvmMemprofRecord record = LlvmMemprofRecord::Header;
  uint64_t offset = 0;  // where the record starts in the file
  LlvmMemprofHeader header;
  LlvmMemprofSegment segment;
  LlvmMemprofMib mib;
  LlvmMemprofStack stack;
};

class LlvmMemprofReader {
 public:
  explicit LlvmMemprofReader(ByteReader &in) : in_(in) {}

  // The next record, false at the end of the last profile.
  bool next(LlvmMemprofItem &item);
  // The header of the profile being read.
  const LlvmMemprofHeader &header() const { return header_; }

 private:
  static constexpr size_t kHeader = SIZE_MAX;     // part_: the next header
  static constexpr uint64_t kUnopened = UINT64_MAX;  // left_: count not read yet
  void read_header(LlvmMemprofItem &item);
  // Moves to the section at `offset` of the profile and reads its count,
  // checked against the bytes up to `limit` for entries of `entry_bytes`.
  uint64_t open_section(uint64_t offset, uint64_t limit, uint64_t entry_bytes, const char *name);
  void skip_to(uint64_t file_offset, const char *name);
  void read_segment(LlvmMemprofItem &item);
  void read_mib(LlvmMemprofItem &item);
  void read_stack(LlvmMemprofItem &item);
  void read_exact(uint8_t *out, size_t n, const char *what);
  uint64_t u64(const char *what);

  ByteReader &in_;
  size_t part_ = kHeader;  // else the section being read, in file order (3: past the last)
  uint64_t start_ = 0;  // of the profile being read
  uint64_t left_ = 0;   // records left in the section being read
  bool any_ = false;    // a profile was read
  LlvmMemprofHeader header_;
};

}  // namespace prof
