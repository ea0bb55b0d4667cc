#include "render/heap_bands.h"

#include <algorithm>
#include <map>

#include "model/frame_names.h"

namespace prof {
namespace {

// `bytes` of the stacks' `stacks_total` as a share of the point's `total`.
double share(double bytes, double stacks_total, double total) {
  if (stacks_total == total) return bytes;
  return stacks_total > 0 ? bytes / stacks_total * total : 0;
}

class Builder {
 public:
  Builder(ProcessHeap &out, size_t bands) : out_(out), bands_(bands) {
    out_.bands.resize(bands + 1);
  }

  // A point whose stacks' bytes are `stacks[i]` (of `stacks_total`).
  void add(double x, double total, const std::vector<double> &stacks, double stacks_total) {
    out_.x.push_back(x);
    out_.total.push_back(total);
    double rest = total;
    for (size_t i = 0; i < bands_; i++) {
      const double v = i < stacks.size() ? share(stacks[i], stacks_total, total) : 0;
      out_.bands[i].bytes.push_back(v);
      rest -= v;
    }
    out_.bands[bands_].bytes.push_back(std::max(rest, 0.0));
  }

 private:
  ProcessHeap &out_;
  const size_t bands_;
};

constexpr size_t kLabelFrames = 4;

// Stripped code (`module+0xSTART`, no file) tells a reader little: a
// legend leaves it out where named frames are.
bool unnamed(const Frame &f) { return f.file.empty() && f.function.find("+0x") != std::string::npos; }

// A legend's name of a frame: a guest chunk's path cut to its file name
// ("@/srv/app/bt.lua:6" -> "@bt.lua:6").
std::string legend_name(const std::string &name) {
  const size_t at = name.find('@');
  const size_t slash = at == std::string::npos ? at : name.find_last_of('/', name.find(':', at));
  if (slash == std::string::npos || slash < at) return name;
  return name.substr(0, at + 1) + name.substr(slash + 1);
}

// A frame repeated in a row (recursion) becomes one, "name ×N", so that
// stacks apart only in their depth say so early.
void collapse_runs(std::vector<std::string> &names) {
  std::vector<std::string> out;
  for (size_t i = 0; i < names.size();) {
    size_t j = i;
    while (j < names.size() && names[j] == names[i]) j++;
    out.push_back(j - i > 1 ? names[i] + " ×" + std::to_string(j - i) : names[i]);
    i = j;
  }
  names.swap(out);
}

}  // namespace

std::vector<std::string> band_labels(const std::vector<std::vector<Frame>> &stacks) {
  const size_t n = stacks.size();
  std::vector<std::vector<std::string>> names(n), all(n);
  for (size_t b = 0; b < n; b++) {
    const std::vector<Frame> &frames = stacks[b];
    const bool any_named = std::any_of(frames.begin(), frames.end(), [](const Frame &f) { return !unnamed(f); });
    for (auto f = frames.rbegin(); f != frames.rend(); ++f) {
      const std::string name = legend_name(short_name(f->label()));
      if (!any_named || !unnamed(*f)) names[b].push_back(name);
      all[b].push_back(name);
    }
    if (names[b].empty()) names[b].push_back("(no stack)");
    collapse_runs(names[b]);
  }
  // Whether another band's stack starts with the same `len` frames as b's.
  auto shared = [&](size_t b, size_t len) {
    for (size_t o = 0; o < n; o++)
      if (o != b && names[o].size() >= len &&
          std::equal(names[b].begin(), names[b].begin() + long(len), names[o].begin()))
        return true;
    return false;
  };
  std::vector<std::string> labels(n);
  for (size_t b = 0; b < n; b++) {
    size_t shown = 1;
    while (shown < std::min(kLabelFrames, names[b].size()) && shared(b, shown)) shown++;
    labels[b] = names[b][0];
    for (size_t i = 1; i < shown; i++) labels[b] += " < " + names[b][i];
  }
  // Where b's whole stack first differs from o's.
  auto first_difference = [&](size_t b, size_t o) {
    return size_t(std::mismatch(all[b].begin(), all[b].end(), all[o].begin(), all[o].end()).first -
                  all[b].begin());
  };
  // Bands still alike take their frame where their stacks first part,
  // until no two are, or the alike ones' frames read the same throughout
  // (each round splits a group, or ends).
  for (bool told = true; told;) {
    told = false;
    std::map<std::string, std::vector<size_t>> groups;
    for (size_t b = 0; b < n; b++) groups[labels[b]].push_back(b);
    for (const auto &g : groups) {
      if (g.second.size() < 2) continue;
      size_t at = SIZE_MAX;
      for (size_t b : g.second)
        for (size_t o : g.second)
          if (o != b) at = std::min(at, first_difference(b, o));
      for (size_t b : g.second)
        if (at < all[b].size()) {
          labels[b] += ", via " + all[b][at];
          told = true;
        }
    }
  }
  return labels;
}

namespace {

// Each band's label (band_labels) and all its frames, innermost first, one
// a line.
void name_bands(Profile &profile, const StreamHeap &h, std::vector<HeapBand> &bands) {
  std::vector<std::vector<Frame>> stacks(h.top.size());
  for (size_t b = 0; b < h.top.size(); b++) {
    stacks[b] = profile.frames(h.top[b].first);
    for (auto f = stacks[b].rbegin(); f != stacks[b].rend(); ++f)
      bands[b].frames += (bands[b].frames.empty() ? "" : "\n") + short_name(f->label());
  }
  const std::vector<std::string> labels = band_labels(stacks);
  for (size_t b = 0; b < h.top.size(); b++) bands[b].label = labels[b];
}

ProcessHeap process_heap(Profile &profile, const StreamHeap &h) {
  ProcessHeap out;
  out.pid = profile.streams()[h.file]->pid;
  out.peak_events = h.peak_events;
  out.markers = &profile.streams()[h.file]->markers;
  const std::vector<HeapPoint> &all = profile.memory().over_time();
  std::vector<const HeapPoint *> points;
  for (const HeapPoint &p : all)
    if (p.file == h.file) points.push_back(&p);
  out.timed = !points.empty() &&
              std::all_of(points.begin(), points.end(), [](const HeapPoint *p) { return p->timed; });

  const std::vector<StackStats> &stacks = profile.memory().stacks();
  std::vector<double> at_peak, at_end;
  for (const auto &[stack, bytes] : h.top) {
    at_peak.push_back(bytes);
    at_end.push_back(stacks[stack].live_bytes);
  }
  Builder build(out, h.top.size());
  build.add(0, 0, {}, 0);  // nothing is recorded before the process starts
  const double peak_x = out.timed ? peak_time(all, h) : double(h.peak_events);
  bool placed = false;
  // XXX: a writer's peak is exact in bytes and time, not in stacks: they
  // are those of the next point (the peak's own record, or after it).
  auto place_peak = [&](const HeapPoint *next) {
    out.peak = out.x.size();
    if (h.writer_peak && next)
      build.add(peak_x, h.peak_bytes, next->bands, next->stacks_bytes);
    else
      build.add(peak_x, h.peak_bytes, at_peak, h.stacks_peak);
    placed = true;
  };
  for (const HeapPoint *p : points) {
    const double x = out.timed ? double(p->time_ns) / 1e9 : double(p->events);
    if (!placed && (out.timed ? x >= peak_x : p->events >= h.peak_events)) place_peak(p);
    build.add(x, p->heap_bytes, p->bands, p->stacks_bytes);
    if (out.timed && p->rss) out.rss.emplace_back(x, double(p->rss));
  }
  if (!placed) place_peak(nullptr);
  if (!out.timed && h.end_events > h.peak_events)
    build.add(double(h.end_events), h.end_bytes, at_end, h.end_bytes);

  name_bands(profile, h, out.bands);
  HeapBand &other = out.bands.back();
  other.label = "other stacks";
  // (Scaled shares leave rounding errors, far under a byte.)
  if (std::all_of(other.bytes.begin(), other.bytes.end(), [](double v) { return v < 1; }))
    out.bands.pop_back();
  return out;
}

}  // namespace

std::vector<ProcessHeap> heap_over_time(const std::vector<Profile *> &profiles) {
  std::vector<ProcessHeap> out;
  for (Profile *profile : profiles)
    for (const StreamHeap &h : profile->memory().stream_heaps())
      out.push_back(process_heap(*profile, h));
  return out;
}

}  // namespace prof
