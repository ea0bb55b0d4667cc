#include "llvm_memprof.h"

#include <cstring>
#include <iterator>

namespace prof {
namespace {

// The bytes of a record by version: [segment, mib] (mib without stack id).
struct VersionLayout {
  uint64_t version;
  size_t segment_bytes, mib_bytes;
  bool build_id_size, densities, histogram;
};
constexpr VersionLayout kLayouts[] = {
    {1, 56, 100, false, false, false},  // clang 14
    {3, 64, 132, true, true, false},    // clang 18
    {4, 64, 144, true, true, true},     // clang 19
};
constexpr size_t kMaxMibBytes = 144;
constexpr size_t kMaxSegmentBytes = 64;

const VersionLayout *layout_of(uint64_t version) {
  for (const VersionLayout &l : kLayouts)
    if (l.version == version) return &l;
  return nullptr;
}

uint64_t le64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
  return v;
}

uint64_t le32(const uint8_t *p) { return uint64_t(p[0]) | uint64_t(p[1]) << 8 | uint64_t(p[2]) << 16 | uint64_t(p[3]) << 24; }

// Reads fields in order from a record's bytes.
struct FieldCursor {
  const uint8_t *p;
  uint64_t u64() {
    const uint64_t v = le64(p);
    p += 8;
    return v;
  }
  uint64_t u32() {
    const uint64_t v = le32(p);
    p += 4;
    return v;
  }
};

}  // namespace

bool is_llvm_memprof_magic(const uint8_t (&first)[8]) { return le64(first) == kLlvmMemprofMagic; }

bool llvm_memprof_version_known(uint64_t version) { return layout_of(version) != nullptr; }

void LlvmMemprofReader::read_exact(uint8_t *out, size_t n, const char *what) {
  try {
    in_.bytes(out, n);
  } catch (const FormatError &e) {
    if (!e.truncated()) throw;
    throw FormatError(e.offset(), true, std::string("input ends inside ") + what);
  }
}

uint64_t LlvmMemprofReader::u64(const char *what) {
  uint8_t b[8];
  read_exact(b, sizeof b, what);
  return le64(b);
}

void LlvmMemprofReader::skip_to(uint64_t file_offset, const char *name) {
  const uint64_t at = in_.offset();
  if (at > file_offset)
    in_.fail(at, std::string("the record before ends past the start of the ") + name +
                     " at byte " + std::to_string(file_offset));
  uint8_t pad[4096];
  for (uint64_t left = file_offset - at; left > 0;) {
    const size_t n = left < sizeof pad ? size_t(left) : sizeof pad;
    read_exact(pad, n, "the padding before a section");
    left -= n;
  }
}

void LlvmMemprofReader::read_header(LlvmMemprofItem &item) {
  start_ = in_.offset();
  item.offset = start_;
  uint8_t b[kLlvmMemprofHeaderBytes];
  read_exact(b, sizeof b, "a MemProf header");
  FieldCursor c{b};
  if (c.u64() != kLlvmMemprofMagic) in_.fail(start_, "not an LLVM MemProf raw profile (bad magic)");
  LlvmMemprofHeader h;
  h.version = c.u64();
  h.total_size = c.u64();
  h.segment_offset = c.u64();
  h.mib_offset = c.u64();
  h.stack_offset = c.u64();
  if (!layout_of(h.version))
    in_.fail(start_ + 8, "LLVM MemProf raw profile version " + std::to_string(h.version) +
                             " is not supported (versions 1, 3 and 4 are)");
  if (!(kLlvmMemprofHeaderBytes <= h.segment_offset && h.segment_offset <= h.mib_offset &&
        h.mib_offset <= h.stack_offset && h.stack_offset <= h.total_size))
    in_.fail(start_ + 16, "section offsets out of order (total " + std::to_string(h.total_size) +
                              ", segments " + std::to_string(h.segment_offset) + ", mibs " +
                              std::to_string(h.mib_offset) + ", stacks " +
                              std::to_string(h.stack_offset) + ")");
  if (h.total_size > UINT64_MAX - start_)
    in_.fail(start_ + 16, "total size " + std::to_string(h.total_size) + " runs past 2^64");
  header_ = h;
  item.record = LlvmMemprofRecord::Header;
  item.header = h;
}

uint64_t LlvmMemprofReader::open_section(uint64_t offset, uint64_t limit, uint64_t entry_bytes,
                                         const char *name) {
  skip_to(start_ + offset, name);
  const uint64_t at = in_.offset();
  const uint64_t count = u64("a section's count");
  // limit >= offset (header check); the count field itself may not fit.
  const uint64_t room = limit - offset < 8 ? 0 : (limit - offset - 8);
  if (limit - offset < 8 || count > room / entry_bytes)
    in_.fail(at, std::to_string(count) + " entries do not fit in the " + name + " (" +
                     std::to_string(limit - offset) + " bytes)");
  return count;
}

void LlvmMemprofReader::read_segment(LlvmMemprofItem &item) {
  const VersionLayout &l = *layout_of(header_.version);
  item.offset = in_.offset();
  uint8_t b[kMaxSegmentBytes];
  read_exact(b, l.segment_bytes, "a segment");
  FieldCursor c{b};
  LlvmMemprofSegment &s = item.segment;
  s.start = c.u64();
  s.end = c.u64();
  s.offset = c.u64();
  uint64_t id_size = 0;
  if (l.build_id_size) {
    id_size = c.u64();
    if (id_size > kLlvmBuildIdBytes)
      in_.fail(item.offset + 24, "build-id size " + std::to_string(id_size) + " exceeds 32");
  }
  s.build_id.assign(reinterpret_cast<const char *>(c.p), size_t(id_size));
  item.record = LlvmMemprofRecord::Segment;
}

void LlvmMemprofReader::read_mib(LlvmMemprofItem &item) {
  const VersionLayout &l = *layout_of(header_.version);
  item.offset = in_.offset();
  uint8_t b[8 + kMaxMibBytes];
  read_exact(b, 8 + l.mib_bytes, "a MIB record");
  FieldCursor c{b};
  LlvmMemprofMib &m = item.mib;
  m.stack_id = c.u64();
  m.alloc_count = c.u32();
  m.total_access = c.u64();
  m.min_access = c.u64();
  m.max_access = c.u64();
  m.total_size = c.u64();
  m.min_size = c.u32();
  m.max_size = c.u32();
  m.alloc_ts = c.u32();
  m.dealloc_ts = c.u32();
  m.total_lifetime = c.u64();
  m.min_lifetime = c.u32();
  m.max_lifetime = c.u32();
  m.alloc_cpu = c.u32();
  m.dealloc_cpu = c.u32();
  m.migrations = c.u32();
  m.lifetime_overlaps = c.u32();
  m.same_alloc_cpu = c.u32();
  m.same_dealloc_cpu = c.u32();
  c.u64();  // data-type-id: never set by the runtime
  // XXX: the density fields repeat what the counts above give (per block,
  // scaled by 100 and 1000); the analyzer derives its own from the totals.
  if (l.densities) c.p += 8 + 4 + 4 + 8 + 4 + 4;
  m.histogram_size = 0;
  if (l.histogram) {
    m.histogram_size = c.u32();
    c.u64();  // histogram-pointer: an address in the dead process
    const uint64_t section_end = start_ + header_.stack_offset;
    const uint64_t at = in_.offset();
    if (m.histogram_size > (section_end - (at < section_end ? at : section_end)) / 8)
      in_.fail(item.offset + 8 + 132, "histogram of " + std::to_string(m.histogram_size) +
                                          " buckets runs past the MIB section");
    skip_to(at + m.histogram_size * 8, "the next MIB record");
  }
  item.record = LlvmMemprofRecord::Mib;
}

void LlvmMemprofReader::read_stack(LlvmMemprofItem &item) {
  item.offset = in_.offset();
  LlvmMemprofStack &s = item.stack;
  s.id = u64("a stack record");
  const uint64_t count_at = in_.offset();
  const uint64_t n = u64("a stack record");
  const uint64_t section_end = start_ + header_.total_size;
  const uint64_t at = in_.offset();
  if (n > kMaxLlvmStackPcs || n > (section_end - (at < section_end ? at : section_end)) / 8)
    in_.fail(count_at, "stack of " + std::to_string(n) + " pcs (the limit is " +
                           std::to_string(kMaxLlvmStackPcs) + ", and the section's end)");
  s.pcs.resize(size_t(n));
  for (uint64_t &pc : s.pcs) pc = u64("a stack record");
  item.record = LlvmMemprofRecord::Stack;
}

bool LlvmMemprofReader::next(LlvmMemprofItem &item) {
  for (;;) {
    if (part_ == kHeader) {
      // XXX: runs concatenated into one file: a new header follows the
      // previous profile's total size, until the input ends.
      if (any_ && in_.at_end()) return false;
      read_header(item);
      any_ = true;
      part_ = 0;
      left_ = kUnopened;
      return true;
    }
    // The sections in file order: where each starts and must end, the bytes
    // of its smallest entry, and how an entry is read.
    struct Section {
      uint64_t offset, limit, entry_bytes;
      const char *name;
      void (LlvmMemprofReader::*read)(LlvmMemprofItem &);
    };
    const VersionLayout &l = *layout_of(header_.version);
    const Section sections[] = {
        {header_.segment_offset, header_.mib_offset, l.segment_bytes, "segment section",
         &LlvmMemprofReader::read_segment},
        {header_.mib_offset, header_.stack_offset, 8 + l.mib_bytes, "MIB section",
         &LlvmMemprofReader::read_mib},
        {header_.stack_offset, header_.total_size, 16, "stack section",
         &LlvmMemprofReader::read_stack},
    };
    if (part_ == std::size(sections)) {
      skip_to(start_ + header_.total_size, "next profile");
      part_ = kHeader;
      continue;
    }
    const Section &s = sections[part_];
    if (left_ == kUnopened) left_ = open_section(s.offset, s.limit, s.entry_bytes, s.name);
    if (left_ > 0) {
      left_--;
      (this->*s.read)(item);
      return true;
    }
    part_++;
    left_ = kUnopened;
  }
}

}  // namespace prof
