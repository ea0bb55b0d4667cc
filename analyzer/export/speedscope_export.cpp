#include "export/speedscope_export.h"

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <utility>

#include "model/stack_values.h"

namespace prof {

void write_speedscope(const std::vector<Profile *> &profiles, bool name_pid,
                      const std::string &name, std::ostream &out) {
  using Json = nlohmann::json;
  Json frames = Json::array(), list = Json::array();
  std::map<std::pair<std::string, std::string>, size_t> frame_ids;
  size_t active = 0;
  for (Profile *profile : profiles) {
    const StackValues values = stack_values(*profile);
    // Frame indices of each stack, shared by the profiles of every type.
    std::vector<Json> stacks;
    for (const ValuedStack &s : values.stacks) {
      Json ids = Json::array();
      for (const Frame &f : s.frames) {
        auto it = frame_ids.emplace(std::make_pair(f.function, f.file), frames.size()).first;
        if (it->second == frames.size()) {
          Json fj = {{"name", f.function}};
          if (!f.file.empty()) fj["file"] = f.file;
          frames.push_back(fj);
        }
        ids.push_back(it->second);
      }
      stacks.push_back(ids);
    }
    const std::string prefix = name_pid && !profile->streams().empty()
                                   ? "pid " + std::to_string(profile->streams()[0]->pid) + ": "
                                   : "";
    for (size_t t = 0; t < values.types.size(); t++) {
      Json samples = Json::array(), weights = Json::array();
      long long sum = 0;
      for (size_t i = 0; i < values.stacks.size(); i++) {
        const long long w = std::llround(values.stacks[i].values[t]);
        if (w <= 0) continue;
        samples.push_back(stacks[i]);
        weights.push_back(w);
        sum += w;
      }
      if (values.types[t].type == "alloc_space" && active == 0) active = list.size();
      list.push_back({{"type", "sampled"},
                      {"name", prefix + values.types[t].type},
                      {"unit", values.types[t].unit == "bytes" ? "bytes" : "none"},
                      {"startValue", 0},
                      {"endValue", sum},
                      {"samples", samples},
                      {"weights", weights}});
    }
  }
  const Json file = {{"$schema", "https://www.speedscope.app/file-format-schema.json"},
                     {"shared", {{"frames", frames}}},
                     {"profiles", list},
                     {"name", name},
                     {"activeProfileIndex", active},
                     {"exporter", "prof-analyze"}};
  // XXX: names come from streams and may hold bytes that are not UTF-8.
  out << file.dump(-1, ' ', false, Json::error_handler_t::replace) << "\n";
}

}  // namespace prof
