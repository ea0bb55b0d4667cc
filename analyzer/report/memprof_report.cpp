#include "report/memprof_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "model/frame_names.h"

namespace prof {

std::string format_count(double n) {
  // XXX: rounded half away from zero first, as llround() does ("%.0f" alone
  // rounds half to even); +0 so that -0.4 is not "-0".
  const double whole = std::round(n) + 0.0;
  char buf[400];  // the longest double written whole has 309 digits
  snprintf(buf, sizeof buf, "%.0f", whole);
  return buf;
}

std::string format_bytes(double bytes, bool human) {
  if (!human) return format_count(bytes) + "B";
  static const char *const kUnits[] = {"B", "KiB", "MiB", "GiB"};
  double v = bytes;
  int unit = 0;
  while (v >= 1024 && unit < 3) {
    v /= 1024;
    unit++;
  }
  if (std::floor(v) == v) return format_count(v) + kUnits[unit];
  char buf[400];
  snprintf(buf, sizeof buf, "%.2f%s", v, kUnits[unit]);
  return buf;
}

uint32_t MemprofReport::intern(const std::string &name) {
  auto it = name_ids_.find(name);
  if (it != name_ids_.end()) return it->second;
  names_.push_back(name);
  return name_ids_[name] = static_cast<uint32_t>(names_.size() - 1);
}

std::string MemprofReport::site_name(StreamContext &ctx, uint32_t host) const {
  const Frame *top = ctx.top_frame(host);
  if (!top) return "[no stack]";
  Frame site = *top;
  // XXX: the allocator's frames (operator new, std::allocator) would put
  // every C++ allocation under one site.
  for (uint32_t h = host; h != 0; h = ctx.stacks.parent(h)) {
    const StackFrame f = ctx.stacks.frame(h);
    const std::vector<Frame> &frames = ctx.symbolizer.frames(f.addr, f.module_epoch);
    const auto caller = std::find_if(frames.rbegin(), frames.rend(), [](const Frame &fr) {
      return !is_allocator_function(fr.function);
    });
    if (caller != frames.rend()) {
      site = *caller;
      break;
    }
  }
  if (!full_names_) site.function = short_name(site.function);
  return site.label();
}

uint32_t MemprofReport::locate(StreamContext &ctx, const MemprofEvent &ev, SiteKey *key) {
  uint32_t host = 0;
  if (ev.has_stacks) {
    host = ctx.stacks.check(ev.host_stack, false, ev.offset);
    ctx.stacks.check(ev.guest_stack, true, ev.offset);
  }
  if (ev.loc.source == kAsourceNone) {
    // libprof: the innermost host frame names the site, and is its identity.
    auto it = stack_names_.find(ev.host_stack);
    if (it == stack_names_.end()) {
      it = stack_names_.emplace(ev.host_stack, intern(site_name(ctx, host))).first;
    }
    key->native = true;
    key->name = it->second;
    return it->second;
  }
  if (names_epoch_ != ctx.naming_epoch) {
    loc_names_.clear();
    names_epoch_ = ctx.naming_epoch;
  }
  const Loc loc{ev.loc.addr, ev.loc.line, ev.loc.traceno};
  auto it = loc_names_.find(loc);
  if (it == loc_names_.end())
    it = loc_names_.emplace(loc, intern(ctx.location_name(ev.loc))).first;
  key->addr = ev.loc.addr;
  key->line = ev.loc.line;
  key->trace = ev.loc.traceno;
  key->name = first_names_.emplace(loc, it->second).first->second;
  return it->second;
}

void MemprofReport::read(StreamContext &ctx) {
  first_names_.clear();
  loc_names_.clear();
  stack_names_.clear();
  names_epoch_ = UINT64_MAX;
  ctx.read_memprof([&](const MemprofEvent &ev) {
    if (ev.record == MemprofRecord::Ext) {
      // XXX: maps are not reported here, but a stream naming stacks it never
      // defined is refused by every command alike.
      if (const auto *map = std::get_if<ext::Map>(&ev.ext)) {
        ctx.stacks.check(map->host_stack, false, ev.offset);
        ctx.stacks.check(map->guest_stack, true, ev.offset);
      }
      return;
    }
    SiteKey key;
    const uint32_t name = locate(ctx, ev, &key);
    add(ev, key, name);
  });
  // Chunk names holding newlines (load() of a string) print as aliases.
  const GuestSymbols &symbols = ctx.file.symbols();
  for (const std::string &chunk : symbols.aliased_chunks())
    aliases_.emplace_back(symbols.alias_of(chunk), chunk);
  // XXX: a stream's blocks are its process's own; the next stream pairs apart.
  heap_ = LiveHeap<Block>();
  if (ctx.window.spec().active()) windows_.emplace_back(ctx.pid, ctx.window.to_json());
}

void MemprofReport::link(Site &s, const Block &old, uint64_t nsize) {
  auto it = s.overrides.find(old.key);
  if (it == s.overrides.end()) {
    it = s.overrides.emplace(old.key, Override{}).first;
    it->second.name = old.name;  // XXX: the reference names it at its first link
  }
  it->second.allocated += nsize;
  it->second.freed += old.size;
  it->second.count++;
  made_retired_[old.name].second++;
}

void MemprofReport::add(const MemprofEvent &ev, const SiteKey &key, uint32_t name) {
  static const Kind kKinds[] = {kAlloc, kRealloc, kFree};
  const Kind kind = kKinds[int(ev.record)];
  auto site = sites_[kind].find(key);
  if (site == sites_[kind].end()) {
    site = sites_[kind].emplace(key, Site{}).first;
    site->second.name = name;  // XXX: the reference names a site at its first event
  }
  Site &s = site->second;
  s.num++;
  if (kind != kAlloc) {
    Block old;
    uint64_t osize = ev.osize;
    if (heap_.take(ev.oaddr, &old)) {
      if (osize == 0) osize = old.size;  // libprof streams leave it to the analyzer
      live_[old.name] = int64_t(uint64_t(live_[old.name]) - old.size);  // (wraps, never UB)
      link(s, old, kind == kRealloc ? ev.nsize : 0);
    } else if (ev.oaddr != 0 || kind == kFree) {
      unknown_frees_++;
    }
    s.free += osize;
  }
  if (kind == kFree) return;
  s.alloc += ev.nsize;
  heap_.insert(ev.naddr, Block{ev.nsize, key, name});
  made_retired_[name].first++;
  live_[name] = int64_t(uint64_t(live_[name]) + ev.nsize);
}

std::vector<const MemprofReport::Site *> MemprofReport::sorted(Kind kind) const {
  std::vector<const Site *> rows;
  for (const auto &kv : sites_[kind]) rows.push_back(&kv.second);
  std::stable_sort(rows.begin(), rows.end(), [&](const Site *a, const Site *b) {
    if (a->num != b->num) return a->num > b->num;
    return names_[a->name] < names_[b->name];
  });
  return rows;
}

std::vector<MemprofReport::HeapRow> MemprofReport::heap_summary(bool compat) const {
  std::map<std::string, HeapRow> rows;
  auto row = [&](uint32_t name) -> HeapRow & {
    HeapRow &r = rows[names_[name]];
    r.name = names_[name];
    return r;
  };
  if (compat) {
    // process.lua's form_heap_delta, by name.
    for (const auto &kv : sites_[kAlloc]) {
      const Site &s = kv.second;
      if (s.alloc == 0) continue;
      row(s.name).bytes += static_cast<int64_t>(s.alloc);
      row(s.name).allocs += s.num;
    }
    for (Kind kind : {kRealloc, kFree})
      for (const auto &kv : sites_[kind])
        for (const auto &ov : kv.second.overrides) {
          const Override &o = ov.second;
          HeapRow &r = row(o.name);
          if (o.allocated > 0) r.bytes += static_cast<int64_t>(o.allocated), r.allocs += o.count;
          if (o.freed > 0) r.bytes -= static_cast<int64_t>(o.freed), r.frees += o.count;
        }
  } else {
    for (const auto &kv : made_retired_) {
      HeapRow &r = row(kv.first);
      r.allocs = kv.second.first;
      r.frees = kv.second.second;
    }
    for (const auto &kv : live_) row(kv.first).bytes += kv.second;
  }
  std::vector<HeapRow> out;
  for (auto &kv : rows)
    if (kv.second.bytes > 0) out.push_back(kv.second);
  std::stable_sort(out.begin(), out.end(),
                   [](const HeapRow &a, const HeapRow &b) { return a.bytes > b.bytes; });
  return out;
}

void MemprofReport::render(std::ostream &out, const ReportOptions &opt) const {
  for (const auto &w : windows_) out << window_line(w.second, w.first) << "\n\n";
  if (!opt.leak_only) {
    static const char *const kTitles[] = {"ALLOCATIONS", "REALLOCATIONS", "DEALLOCATIONS"};
    for (Kind kind : {kAlloc, kRealloc, kFree}) {
      out << kTitles[kind] << "\n";
      for (const Site *s : sorted(kind)) {
        out << names_[s->name] << ": " << s->num << " events\t+"
            << format_bytes(double(s->alloc), opt.human_readable) << "\t-"
            << format_bytes(double(s->free), opt.human_readable) << "\n";
        if (s->overrides.empty()) continue;
        std::vector<std::string> locs;
        for (const auto &ov : s->overrides) locs.push_back(names_[ov.second.name]);
        std::sort(locs.begin(), locs.end());
        out << "\tOverrides:\n";
        for (const auto &l : locs) out << "\t\t" << l << "\n";
        out << "\n";
      }
      out << "\n";
    }
  }
  out << "HEAP SUMMARY:\n";
  for (const HeapRow &r : heap_summary(opt.compat_heap_summary))
    out << r.name << " holds " << format_bytes(double(r.bytes), opt.human_readable) << ": " << r.allocs
        << " allocs, " << r.frees << " frees\n";
  out << "\n";
  if (aliases_.empty()) return;
  out << "ALIASES:\n";
  for (const auto &a : aliases_) {
    out << a.first << ":\n";
    // humanize.lua: the chunk's non-empty lines, numbered from 1.
    size_t n = 1, start = 0;
    while (start <= a.second.size()) {
      size_t end = a.second.find('\n', start);
      if (end == std::string::npos) end = a.second.size();
      if (end > start) out << n++ << "\t| " << a.second.substr(start, end - start) << "\n";
      start = end + 1;
    }
    out << "\n\n";
  }
}

nlohmann::json MemprofReport::to_json(const ReportOptions &opt) const {
  nlohmann::json j;
  static const char *const kKeys[] = {"allocations", "reallocations", "deallocations"};
  for (Kind kind : {kAlloc, kRealloc, kFree}) {
    nlohmann::json rows = nlohmann::json::array();
    for (const Site *s : sorted(kind)) {
      std::vector<std::string> locs;
      for (const auto &ov : s->overrides) locs.push_back(names_[ov.second.name]);
      std::sort(locs.begin(), locs.end());
      rows.push_back({{"location", names_[s->name]},
                      {"events", s->num},
                      {"allocated", s->alloc},
                      {"freed", s->free},
                      {"overrides", locs}});
    }
    j[kKeys[kind]] = rows;
  }
  nlohmann::json heap = nlohmann::json::array();
  for (const HeapRow &r : heap_summary(opt.compat_heap_summary))
    heap.push_back(
        {{"location", r.name}, {"holds", r.bytes}, {"allocs", r.allocs}, {"frees", r.frees}});
  j["heap_summary"] = heap;
  j["unknown_frees"] = unknown_frees_;
  nlohmann::json aliases = nlohmann::json::object();
  for (const auto &a : aliases_) aliases[a.first] = a.second;
  j["aliases"] = aliases;
  if (!windows_.empty()) {
    j["windows"] = nlohmann::json::array();
    for (const auto &w : windows_) {
      j["windows"].push_back(w.second);
      j["windows"].back()["pid"] = w.first;
    }
  }
  return j;
}

}  // namespace prof
