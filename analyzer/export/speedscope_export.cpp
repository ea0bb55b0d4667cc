#include "export/speedscope_export.h"

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <utility>

#include "model/stack_values.h"
#include "report/memprof_report.h"
#include "render/json_text.h"

namespace prof {
namespace {

// Shared frames by (function, file), numbered as first named.
class SpeedscopeFrames {
 public:
  // Starts a profile's call tree.
  void begin(const CallTree &calls) {
    calls_ = &calls;
    by_frame_id_.assign(calls.frame_count(), UINT32_MAX);
  }
  uint32_t index(uint32_t frame_id) {
    uint32_t &index = by_frame_id_[frame_id];
    if (index != UINT32_MAX) return index;
    const Frame f = calls_->frame(frame_id);
    auto it = ids_.emplace(std::make_pair(f.function, f.file), uint32_t(list_.size())).first;
    if (it->second == list_.size()) list_.push_back(&it->first);
    return index = it->second;
  }
  void write(std::ostream &out) const {
    out << "[";
    for (size_t i = 0; i < list_.size(); i++) {
      out << (i ? "," : "") << "{\"name\":" << json_text(list_[i]->first);
      if (!list_[i]->second.empty()) out << ",\"file\":" << json_text(list_[i]->second);
      out << "}";
    }
    out << "]";
  }

 private:
  const CallTree *calls_ = nullptr;
  std::vector<uint32_t> by_frame_id_;
  std::map<std::pair<std::string, std::string>, uint32_t> ids_;
  std::vector<const std::pair<std::string, std::string> *> list_;
};

// The events of one value type: the call tree depth first, each node's own
// value, then its callees'.
void write_events(const CallTree &calls, const PrefixTree::Children &children,
                  const std::vector<double> &own, SpeedscopeFrames &frames, std::ostream &out) {
  std::vector<double> total(own);
  for (uint32_t n = calls.size(); n-- > 1;) total[calls.parent(n)] += total[n];
  struct Open {
    uint32_t node;
    const uint32_t *next;
  };
  std::vector<Open> open{{CallTree::kRoot, children.begin(CallTree::kRoot)}};
  double at = own[CallTree::kRoot];
  bool first = true;
  auto event = [&](char type, uint32_t node) {
    out << (first ? "" : ",") << "{\"type\":\"" << type
        << "\",\"frame\":" << frames.index(calls.frame_of(node)) << ",\"at\":" << format_count(at)
        << "}";
    first = false;
  };
  while (!open.empty()) {
    Open &o = open.back();
    if (o.next == children.end(o.node)) {
      if (o.node != CallTree::kRoot) event('C', o.node);
      open.pop_back();
      continue;
    }
    const uint32_t child = *o.next++;
    if (total[child] <= 0) continue;
    event('O', child);
    at += own[child];
    open.push_back({child, children.begin(child)});
  }
}

}  // namespace

void write_speedscope(const std::vector<Profile *> &profiles, bool name_pid,
                      const std::string &name, std::ostream &out) {
  SpeedscopeFrames frames;
  size_t active = 0, count = 0;
  out << "{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\"exporter\":"
         "\"prof-analyze\",\"name\":"
      << json_text(name) << ",\"profiles\":[";
  for (Profile *profile : profiles) {
    const StackValues values = stack_values(*profile);
    const CallTree &calls = profile->calls();
    const PrefixTree::Children children = calls.tree().children();
    frames.begin(calls);
    const std::string prefix = name_pid && !profile->streams().empty()
                                   ? "pid " + std::to_string(profile->streams()[0]->pid) + ": "
                                   : "";
    for (size_t t = 0; t < values.types.size(); t++) {
      std::vector<double> own(calls.size());
      double sum = 0;
      for (size_t i = 0; i < values.nodes.size(); i++) {
        const double w = std::round(values.values_of(i)[t]);
        if (w <= 0) continue;
        own[values.nodes[i]] += w;
        sum += w;
      }
      if (values.types[t].type == "alloc_space" && active == 0) active = count;
      out << (count++ ? "," : "") << "{\"type\":\"evented\",\"name\":"
          << json_text(prefix + values.types[t].type) << ",\"unit\":\""
          << (values.types[t].unit == "bytes" ? "bytes" : "none")
          << "\",\"startValue\":0,\"endValue\":" << format_count(sum) << ",\"events\":[";
      write_events(calls, children, own, frames, out);
      out << "]}";
    }
  }
  out << "],\"activeProfileIndex\":" << active << ",\"shared\":{\"frames\":";
  frames.write(out);
  out << "}}\n";
}

}  // namespace prof
