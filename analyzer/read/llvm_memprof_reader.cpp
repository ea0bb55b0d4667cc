#include "read/llvm_memprof_reader.h"

#include <gelf.h>

#include <map>
#include <stdexcept>
#include <unordered_map>
#include <utility>
#include <vector>

#include "read/elf_file.h"

namespace prof {
namespace {

constexpr uint64_t kPage = 4096;

// The binary named by --binary, and how to find it among a profile's segments.
class ProfiledBinary {
 public:
  explicit ProfiledBinary(const std::string &path) : path_(path) {
    if (path.empty()) return;
    file_ = ElfFile::open(path);
    if (!file_) throw std::runtime_error("--binary " + path + ": not an ELF file that can be read");
    GElf_Addr bias = 0;
    Elf *elf = dwfl_module_getelf(file_->module(), &bias);
    size_t n = 0;
    if (!elf || elf_getphdrnum(elf, &n) != 0)
      throw std::runtime_error("--binary " + path + ": no program headers");
    for (size_t i = 0; i < n; i++) {
      GElf_Phdr ph;
      if (!gelf_getphdr(elf, int(i), &ph) || ph.p_type != PT_LOAD || !(ph.p_flags & PF_X)) continue;
      if (text_.p_memsz) throw std::runtime_error("--binary " + path + ": several executable segments");
      text_ = ph;
    }
    if (!text_.p_memsz) throw std::runtime_error("--binary " + path + ": no executable segment");
  }

  bool given() const { return file_ != nullptr; }
  const std::string &path() const { return path_; }

  // The binary's load bias in a profile of `version` with these segments;
  // throws when the binary is not among them.
  uint64_t load_bias(uint64_t version, const std::vector<LlvmMemprofSegment> &segments) const {
    if (version == 1) return bias_by_layout(segments);
    const std::string &id = file_->build_id();
    if (id.empty())
      throw std::runtime_error("--binary " + path_ + " has no build-id to check against the profile");
    std::string seen;
    for (const LlvmMemprofSegment &s : segments) {
      if (s.build_id == id) return s.offset;
      if (!s.build_id.empty() && seen.find(hex_bytes(s.build_id)) == std::string::npos)
        seen += (seen.empty() ? "" : ", ") + hex_bytes(s.build_id);
    }
    throw std::runtime_error("--binary " + path_ + " (build-id " + hex_bytes(id) +
                             ") is not in this profile (its build-ids: " +
                             (seen.empty() ? "none" : seen) + ")");
  }

  uint64_t size() const { return text_.p_vaddr + text_.p_memsz; }

  // Whether a segment is the binary's, placed at `bias`.
  bool owns(uint64_t version, const LlvmMemprofSegment &s, uint64_t bias) const {
    if (version == 1) return s.start == bias + (text_.p_vaddr & ~(kPage - 1));
    return s.build_id == file_->build_id();
  }

 private:
  // XXX: version 1 leaves build-ids zero; the mapping of the executable
  // segment (page-aligned file offset and length) is what identifies it.
  uint64_t bias_by_layout(const std::vector<LlvmMemprofSegment> &segments) const {
    const uint64_t first = text_.p_vaddr & ~(kPage - 1);
    const uint64_t length = ((text_.p_vaddr + text_.p_memsz + kPage - 1) & ~(kPage - 1)) - first;
    const uint64_t file_offset = text_.p_offset & ~(kPage - 1);
    const LlvmMemprofSegment *match = nullptr;
    size_t matches = 0;
    for (const LlvmMemprofSegment &s : segments)
      if (s.offset == file_offset && s.end - s.start == length && s.start >= first) {
        match = &s;
        matches++;
      }
    if (matches != 1)
      throw std::runtime_error(
          "--binary " + path_ + ": " +
          (matches ? "several segments" : "no segment") +
          " of this version 1 profile (which has no build-ids) match its executable segment");
    return match->start - first;
  }

  std::string path_;
  std::shared_ptr<ElfFile> file_;
  GElf_Phdr text_{};
};

// The prefix tree of a profile's stacks: (parent node, pc) -> node id.
struct PairHash {
  size_t operator()(const std::pair<uint64_t, uint64_t> &p) const {
    return std::hash<uint64_t>()(p.first * 0x9E3779B97F4A7C15ull ^ p.second);
  }
};

class StackTreeBuilder {
 public:
  explicit StackTreeBuilder(StackTable &table) : table_(table) {}

  // The node of a stack (pcs innermost first), adding what is new, with
  // frames named at `epoch`; 0 for an empty stack.
  // XXX: the runtime takes its stacks inside its allocation interceptor, so
  // the innermost pc is always the interceptor (malloc, operator new, ...):
  // left out, the stack ends at the call site, as libprof's stacks do.
  uint64_t add(const std::vector<uint64_t> &pcs, uint32_t epoch, uint64_t offset) {
    uint64_t node = 0;
    for (size_t i = pcs.size(); i-- > 1;) {
      auto [it, fresh] = nodes_.try_emplace({node, pcs[i]}, next_id_);
      if (fresh) {
        StackFrame f;
        // XXX: MemProf writes the call's address (return address - 1); the
        // table holds return addresses, as libprof's stacks do.
        f.addr = pcs[i] + 1;
        f.module_epoch = epoch;
        table_.add(next_id_++, node, f, offset);
      }
      node = it->second;
    }
    return node;
  }
  // A new profile: its pcs are named against its own placement of the binary.
  void next_profile() { nodes_.clear(); }

 private:
  StackTable &table_;
  std::unordered_map<std::pair<uint64_t, uint64_t>, uint64_t, PairHash> nodes_;
  uint64_t next_id_ = 1;
};

// The contexts of one profile waiting for their stacks.
struct PendingContexts {
  std::vector<std::pair<uint64_t, LlvmMemprofMib>> mibs;  // (offset, record)
  std::unordered_map<uint64_t, size_t> by_stack;           // stack id -> index in mibs

  void add(uint64_t offset, const LlvmMemprofMib &m) {
    auto [it, fresh] = by_stack.try_emplace(m.stack_id, mibs.size());
    if (fresh) {
      mibs.emplace_back(offset, m);
      return;
    }
    merge(mibs[it->second].second, m);
  }
  // XXX: the runtime merges the blocks of one stack itself; a stack named
  // twice (profiles of one process concatenated) is summed the same way.
  static void merge(LlvmMemprofMib &to, const LlvmMemprofMib &m) {
    to.alloc_count += m.alloc_count;
    to.total_access += m.total_access;
    to.min_access = std::min(to.min_access, m.min_access);
    to.max_access = std::max(to.max_access, m.max_access);
    to.total_size += m.total_size;
    to.min_size = std::min(to.min_size, m.min_size);
    to.max_size = std::max(to.max_size, m.max_size);
    to.total_lifetime += m.total_lifetime;
    to.min_lifetime = std::min(to.min_lifetime, m.min_lifetime);
    to.max_lifetime = std::max(to.max_lifetime, m.max_lifetime);
    to.migrations += m.migrations;
    to.lifetime_overlaps += m.lifetime_overlaps;
  }
  void clear() {
    mibs.clear();
    by_stack.clear();
  }
};

}  // namespace

void read_llvm_memprof(StreamContext &ctx, const std::string &binary,
                       const std::function<void(uint64_t, const LlvmMemprofMib &)> &context) {
  const ProfiledBinary exe(binary);
  StackTreeBuilder tree(ctx.stacks);
  PendingContexts pending;
  std::vector<LlvmMemprofSegment> segments;
  std::vector<char> done;  // by index in pending.mibs: handed over
  bool named = false;      // the binary is placed for this profile
  std::vector<uint64_t> placed;  // the load biases of the modules named
  uint64_t bias = 0;
  // XXX: the other objects' paths are unknown; named by build-id (or as
  // without one) and offset from their load bias, their frames stay the
  // same from run to run, so diffs and merges match them.
  auto place_others = [&](uint64_t version) {
    std::map<uint64_t, std::pair<uint64_t, std::string>> objects;  // bias -> (end, name)
    for (const LlvmMemprofSegment &s : segments) {
      if (exe.given() && exe.owns(version, s, bias)) continue;
      const uint64_t object_bias = version == 1 ? s.start - s.offset : s.offset;
      if (object_bias > s.start) continue;
      auto &o = objects[object_bias];
      o.first = std::max(o.first, s.end);
      o.second = s.build_id.empty() ? "[no build-id]"
                                    : "[build-id " + hex_bytes(s.build_id.substr(0, 6)) + "]";
    }
    for (const auto &[object_bias, o] : objects) {
      ext::ModuleLoad load;
      load.base = object_bias;
      load.size = o.first - object_bias;
      load.path = o.second;
      ctx.symbolizer.module_load(load);
      placed.push_back(object_bias);
    }
  };
  auto place_binary = [&](uint64_t version) {
    named = true;
    for (uint64_t base : placed) ctx.symbolizer.module_unload(base);
    placed.clear();
    if (exe.given()) {
      bias = exe.load_bias(version, segments);
      ext::ModuleLoad load;
      load.base = bias;
      load.size = exe.size();
      load.path = exe.path();
      ctx.symbolizer.module_load(load);
      placed.push_back(bias);
    }
    place_others(version);
    ctx.naming_epoch++;
  };
  auto finish_profile = [&](bool complete) {
    for (size_t i = 0; i < pending.mibs.size(); i++) {
      if (i < done.size() && done[i]) continue;
      if (complete)
        throw FormatError(pending.mibs[i].first, false,
                          "MIB names stack " + std::to_string(pending.mibs[i].second.stack_id) +
                              ", which the profile never defines");
      context(0, pending.mibs[i].second);
    }
    pending.clear();
    done.clear();
    segments.clear();
  };

  ReadProgress progress(ctx.file.path(), ctx.file.size());
  LlvmMemprofReader reader(ctx.file.reader());
  LlvmMemprofItem item;
  try {
    ctx.end = read_records([&] {
      try {
        bool any = false;
        while (reader.next(item)) {
          progress.at(item.offset);
          switch (item.record) {
            case LlvmMemprofRecord::Header:
              if (any) finish_profile(true);
              any = true;
              tree.next_profile();
              named = false;
              break;
            case LlvmMemprofRecord::Segment:
              segments.push_back(item.segment);
              break;
            case LlvmMemprofRecord::Mib:
              if (!exe.given())
                throw std::runtime_error(
                    "an LLVM MemProf raw profile names no binary: give it with --binary PATH");
              if (!named) place_binary(reader.header().version);
              pending.add(item.offset, item.mib);
              break;
            case LlvmMemprofRecord::Stack: {
              if (!named) place_binary(reader.header().version);
              const auto it = pending.by_stack.find(item.stack.id);
              if (it == pending.by_stack.end()) break;  // a stack no context names
              if (done.size() < pending.mibs.size()) done.resize(pending.mibs.size(), 0);
              if (done[it->second])
                throw FormatError(item.offset, false,
                                  "stack " + std::to_string(item.stack.id) + " defined twice");
              done[it->second] = 1;
              context(tree.add(item.stack.pcs, ctx.symbolizer.epoch(), item.offset),
                      pending.mibs[it->second].second);
              break;
            }
          }
        }
        finish_profile(true);
      } catch (const FormatError &e) {
        if (e.truncated()) finish_profile(false);
        throw;
      }
    });
  } catch (const std::bad_alloc &) {
    throw OutOfMemory(item.offset);
  }
}

}  // namespace prof
