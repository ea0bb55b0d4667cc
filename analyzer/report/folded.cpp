#include "report/folded.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "ext.h"
#include "report/memprof_report.h"
#include "render/json_text.h"

namespace prof {
namespace {

std::string folded_name(const Frame &f) {
  std::string name = f.function;
  for (char &c : name) c = c == ';' ? ':' : c == '\n' || c == '\r' ? ' ' : c;
  return name;
}

constexpr const char *kNoStack = "[no stack]";

// What a node contributes to the lines under its parent: its own line
// (bare) and the lines of the stacks through it (a block, all "NAME;...").
struct Item {
  uint32_t node;
  bool block;
};

// Whether a's lines come before b's in byte order: a bare line is its name,
// a block its name and ';' (names hold no ';').
bool before(std::string_view a, bool a_block, std::string_view b, bool b_block) {
  const size_t n = std::min(a.size(), b.size());
  if (const int c = a.substr(0, n).compare(b.substr(0, n))) return c < 0;
  if (a.size() == b.size()) return !a_block && b_block;
  if (a.size() < b.size()) return !a_block || ';' < static_cast<unsigned char>(b[n]);
  return b_block && static_cast<unsigned char>(a[n]) < ';';
}

// Notes where the frames of call-tree node `call` (projected to `node`) and
// of its callers were: the first frame seen with a name gives its file:line,
// any inlined frame marks its node.
void note_sources(const CallTree &calls, uint32_t call, uint32_t node, FoldedStacks &into) {
  const NameTree &names = into.names;
  if (into.inlined.size() < names.size()) into.inlined.resize(names.size());
  if (into.where.size() < names.names().size()) into.where.resize(names.names().size());
  for (; call != CallTree::kRoot && node != NameTree::kRoot;
       call = calls.parent(call), node = names.parent(node)) {
    const uint32_t name = names.tree().key(node);
    const uint32_t frame = calls.frame_of(call);
    into.inlined[node] = into.inlined[node] || calls.kind(frame) == Frame::Kind::Inlined;
    if (!into.where[name].empty()) continue;
    const Frame f = calls.frame(frame);
    if (!f.file.empty())
      into.where[name] = basename_of(f.file) + (f.line ? ":" + std::to_string(f.line) : "");
  }
}

}  // namespace

const std::vector<MemoryMetric> &memory_metrics() {
  static const std::vector<MemoryMetric> kMetrics = {
      {"alloc-bytes", "bytes", "Memory: bytes allocated",
       [](const StackStats &s) { return s.alloc_bytes; }},
      {"alloc-count", "allocations", "Memory: allocations",
       [](const StackStats &s) { return s.alloc_count; }},
      {"leaked-bytes", "bytes", "Memory: bytes leaked (live at the end)",
       [](const StackStats &s) { return s.live_bytes; }},
      {"peak-bytes", "bytes", "Memory: bytes held at the peak",
       [](const StackStats &s) { return s.peak_bytes; }},
      {"access-count", "accesses", "MemProf: accesses to the blocks",
       [](const StackStats &s) { return measures_of(s).accesses; }, true},
      {"access-density", "accesses/byte/s", "MemProf: accesses per byte per second of lifetime",
       access_density, true},
      {"lifetime-ms", "ms", "MemProf: block lifetimes, summed",
       [](const StackStats &s) { return measures_of(s).lifetime_ms; }, true},
      {"lifetime-overlaps", "overlaps", "MemProf: blocks allocated before the previous one died",
       [](const StackStats &s) { return measures_of(s).lifetime_overlaps; }, true},
      {"cpu-migrations", "migrations", "MemProf: blocks freed on another CPU than allocated",
       [](const StackStats &s) { return measures_of(s).cpu_migrations; }, true},
  };
  return kMetrics;
}

void add_folded_stacks(Profile &profile, const FoldedOptions &opt, bool per_process,
                       FoldedStacks &into) {
  const MemoryMetric *metric = nullptr;
  for (const MemoryMetric &m : memory_metrics())
    if (opt.metric == m.name) metric = &m;
  if (!metric) throw std::invalid_argument("unknown metric " + opt.metric);
  NameTree &names = into.names;
  // XXX: per process, the process is the root frame, so one graph shows all.
  uint32_t root = NameTree::kRoot;
  if (per_process && !profile.streams().empty()) {
    const StreamContext &ctx = *profile.streams()[0];
    root = names.child(root, "[" + (ctx.pid ? "pid " + std::to_string(ctx.pid)
                                            : basename_of(ctx.file.path())) + "]");
  }
  auto add = [&](uint32_t node, uint32_t under, double count) {
    if (node == under && under == root) node = names.child(under, kNoStack);
    if (into.counts.size() <= node) into.counts.resize(names.size());
    into.counts[node] += count;
  };

  const std::vector<StackStats> &stacks = profile.memory().stacks();
  NameProjection memory(profile.calls(), names, folded_name, root, opt.collapse_recursion);
  const bool memory_too = opt.domain != FoldedOptions::Domain::Cpu;
  for (uint32_t id = 0; memory_too && id < stacks.size(); id++) {
    const double v = metric->value(stacks[id]);
    if (v <= 0) continue;
    const uint32_t call = profile.node(id);
    uint32_t node = memory.node(call);
    if (opt.by_type && profile.object_type(id))
      node = names.child(node, std::string("[") + object_type_name(profile.object_type(id)) + "]");
    add(node, root, v);
    note_sources(profile.calls(), call, node, into);
  }
  std::map<uint8_t, NameProjection> by_vmstate;
  const bool cpu_too = opt.domain != FoldedOptions::Domain::Memory;
  for (const CpuModel::Stack &s : profile.cpu().stacks()) {
    if (!cpu_too) break;
    uint32_t under = root;
    if (opt.by_vmstate) under = names.child(root, vmstate_name(s.vmstate));
    auto it = by_vmstate.try_emplace(opt.by_vmstate ? s.vmstate : 0, profile.calls(), names,
                                     folded_name, under, opt.collapse_recursion).first;
    const uint32_t node = it->second.node(s.node);
    add(node, under, s.samples);
    note_sources(profile.calls(), s.node, node, into);
  }
}

FoldedStacks folded_stacks(const std::vector<Profile *> &profiles, const FoldedOptions &opt,
                           bool per_process) {
  FoldedStacks out;
  for (Profile *profile : profiles) add_folded_stacks(*profile, opt, per_process, out);
  return out;
}

void for_each_folded(const FoldedStacks &stacks,
                     const std::function<void(const std::string &, double)> &line) {
  const NameTree &names = stacks.names;
  const PrefixTree::Children children = names.tree().children();
  // Depth first, each node's items in the byte order of their lines; one
  // level per block entered, with the length of the line before it.
  struct Level {
    std::vector<Item> items;
    size_t next = 0, text_size = 0;
  };
  std::vector<Level> levels;
  std::string text;
  auto enter = [&](uint32_t node) {
    Level level;
    level.text_size = text.size();
    if (node != NameTree::kRoot) text += (text.empty() ? "" : ";") + std::string(names.name(node));
    for (const uint32_t *c = children.begin(node); c != children.end(node); ++c) {
      if (stacks.count(*c) > 0) level.items.push_back({*c, false});
      if (children.begin(*c) != children.end(*c)) level.items.push_back({*c, true});
    }
    std::sort(level.items.begin(), level.items.end(), [&](const Item &a, const Item &b) {
      return before(names.name(a.node), a.block, names.name(b.node), b.block);
    });
    levels.push_back(std::move(level));
  };
  enter(NameTree::kRoot);
  while (!levels.empty()) {
    Level &level = levels.back();
    if (level.next == level.items.size()) {
      text.resize(level.text_size);
      levels.pop_back();
      continue;
    }
    const Item item = level.items[level.next++];
    if (item.block) {
      enter(item.node);
      continue;
    }
    const size_t size = text.size();
    text += (text.empty() ? "" : ";") + std::string(names.name(item.node));
    line(text, stacks.count(item.node));
    text.resize(size);
  }
}

void render_folded(const FoldedStacks &stacks, std::ostream &out) {
  for_each_folded(stacks, [&](const std::string &text, double count) {
    const double n = std::round(count);
    if (n >= 1) out << text << " " << format_count(n) << "\n";
  });
}

void render_folded_json(const FoldedStacks &stacks, std::ostream &out) {
  // XXX: written element by element, as nlohmann's dump(1) of the array would.
  bool first = true;
  for_each_folded(stacks, [&](const std::string &text, double count) {
    std::string element = json_text(nlohmann::json{{"stack", text}, {"value", count}}, 1);
    size_t at = 0;
    while ((at = element.find('\n', at)) != std::string::npos) element.insert(++at, " ");
    out << (first ? "[\n " : ",\n ") << element;
    first = false;
  });
  out << (first ? "[]\n" : "\n]\n");
}

}  // namespace prof
