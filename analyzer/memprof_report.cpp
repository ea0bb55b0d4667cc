#include "memprof_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace prof {

std::string format_bytes(int64_t bytes, bool human) {
  char buf[48];
  if (!human) {
    snprintf(buf, sizeof buf, "%lldB", static_cast<long long>(bytes));
    return buf;
  }
  static const char *const kUnits[] = {"B", "KiB", "MiB", "GiB"};
  double v = static_cast<double>(bytes);
  int unit = 0;
  while (v >= 1024 && unit < 3) {
    v /= 1024;
    unit++;
  }
  if (std::floor(v) == v)
    snprintf(buf, sizeof buf, "%lld%s", static_cast<long long>(v), kUnits[unit]);
  else
    snprintf(buf, sizeof buf, "%.2f%s", v, kUnits[unit]);
  return buf;
}

MemprofReport::MemprofReport(Namer namer, SiteKey (*key_of)(const MemprofEvent &))
    : namer_(std::move(namer)), key_of_(key_of) {}

uint32_t MemprofReport::intern(const std::string &name) {
  auto it = name_ids_.find(name);
  if (it != name_ids_.end()) return it->second;
  names_.push_back(name);
  return name_ids_[name] = static_cast<uint32_t>(names_.size() - 1);
}

MemprofReport::Site &MemprofReport::site(Kind kind, const SiteKey &key, uint32_t name) {
  auto it = sites_[kind].find(key);
  if (it == sites_[kind].end()) {
    it = sites_[kind].emplace(key, Site{}).first;
    it->second.name = name;  // XXX: the reference names a site at its first event
  }
  return it->second;
}

void MemprofReport::link(Site &s, const Block *old, uint64_t nsize) {
  if (!old) return;
  auto it = s.overrides.find(old->key);
  if (it == s.overrides.end()) {
    it = s.overrides.emplace(old->key, Override{}).first;
    it->second.name = old->name;
  }
  it->second.allocated += nsize;
  it->second.freed += old->size;
  it->second.count++;
  born_died_[old->name].second++;
}

void MemprofReport::add(const MemprofEvent &ev) {
  const uint32_t name = intern(namer_(ev));
  const SiteKey key = key_of_(ev);
  Block old{};
  bool found = false;
  uint64_t osize = ev.osize;
  if (ev.record != MemprofRecord::Alloc) {
    found = heap_.take(ev.oaddr, &old);
    if (!found) unknown_frees_++;
    if (found && osize == 0) osize = old.size;  // libprof streams leave it to us
  }
  switch (ev.record) {
    case MemprofRecord::Alloc: {
      Site &s = site(kAlloc, key, name);
      s.num++;
      s.alloc += ev.nsize;
      break;
    }
    case MemprofRecord::Realloc: {
      Site &s = site(kRealloc, key, name);
      s.num++;
      s.free += osize;
      s.alloc += ev.nsize;
      link(s, found ? &old : nullptr, ev.nsize);
      break;
    }
    case MemprofRecord::Free: {
      Site &s = site(kFree, key, name);
      s.num++;
      s.free += osize;
      link(s, found ? &old : nullptr, 0);
      return;
    }
    default:
      return;
  }
  heap_.insert(ev.naddr, Block{ev.nsize, key, name});
  born_died_[name].first++;
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
    heap_.for_each([&](uint64_t, const Block &b) { row(b.name).bytes += int64_t(b.size); });
    for (const auto &kv : born_died_) {
      HeapRow &r = row(kv.first);
      r.allocs = kv.second.first;
      r.frees = kv.second.second;
    }
  }
  std::vector<HeapRow> out;
  for (auto &kv : rows)
    if (kv.second.bytes > 0) out.push_back(kv.second);
  std::stable_sort(out.begin(), out.end(),
                   [](const HeapRow &a, const HeapRow &b) { return a.bytes > b.bytes; });
  return out;
}

void MemprofReport::render(std::ostream &out, const ReportOptions &opt) const {
  if (!opt.leak_only) {
    static const char *const kTitles[] = {"ALLOCATIONS", "REALLOCATIONS", "DEALLOCATIONS"};
    for (Kind kind : {kAlloc, kRealloc, kFree}) {
      out << kTitles[kind] << "\n";
      for (const Site *s : sorted(kind)) {
        out << names_[s->name] << ": " << s->num << " events\t+"
            << format_bytes(int64_t(s->alloc), opt.human_readable) << "\t-"
            << format_bytes(int64_t(s->free), opt.human_readable) << "\n";
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
    out << r.name << " holds " << format_bytes(r.bytes, opt.human_readable) << ": " << r.allocs
        << " allocs, " << r.frees << " frees\n";
  out << "\n";
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
  return j;
}

}  // namespace prof
