#include "report/object_types.h"

#include <array>
#include <cmath>
#include <iomanip>

#include "ext.h"
#include "report/memprof_report.h"

namespace prof {

using Json = nlohmann::json;

Json object_types_json(const Profile &profile) {
  if (!profile.has_object_types()) return nullptr;
  std::array<StackStats, kMaxObjectType + 1> by_type{};  // [0]: untyped
  const std::vector<StackStats> &stacks = profile.memory().stacks();
  for (uint32_t id = 0; id < stacks.size(); id++) {
    StackStats &t = by_type[profile.object_type(id)];
    t.alloc_bytes += stacks[id].alloc_bytes;
    t.alloc_count += stacks[id].alloc_count;
    t.peak_bytes += stacks[id].peak_bytes;
    t.peak_blocks += stacks[id].peak_blocks;
    t.live_bytes += stacks[id].live_bytes;
    t.live_blocks += stacks[id].live_blocks;
    t.allocs += stacks[id].allocs;
  }
  Json rows = Json::array();
  auto row = [&](const char *name, const StackStats &t) {
    rows.push_back({{"type", name},
                    {"alloc_bytes", t.alloc_bytes},
                    {"alloc_count", t.alloc_count},
                    {"peak_bytes", t.peak_bytes},
                    {"peak_blocks", t.peak_blocks},
                    {"leaked_bytes", t.live_bytes},
                    {"leaked_blocks", t.live_blocks}});
  };
  for (uint8_t type = 1; type <= kMaxObjectType; type++)
    if (by_type[type].allocs) row(object_type_name(type), by_type[type]);
  if (by_type[0].allocs) row("untyped", by_type[0]);
  return rows;
}

void render_object_types(const Json &types, std::ostream &out) {
  auto bytes = [](const Json &v) { return format_bytes(std::round(v.get<double>()), true); };
  out << "\nOBJECT TYPES: memory by the kind of guest object it was allocated for\n"
      << "  " << std::left << std::setw(10) << "type" << std::right << std::setw(12) << "allocated"
      << std::setw(10) << "blocks" << std::setw(12) << "at peak" << std::setw(10) << "blocks"
      << std::setw(12) << "leaked" << std::setw(10) << "blocks" << "\n";
  for (const Json &t : types)
    out << "  " << std::left << std::setw(10) << t["type"].get<std::string>() << std::right
        << std::setw(12) << bytes(t["alloc_bytes"]) << std::setw(10)
        << format_count(t["alloc_count"].get<double>()) << std::setw(12) << bytes(t["peak_bytes"])
        << std::setw(10) << t["peak_blocks"].get<uint64_t>() << std::setw(12)
        << bytes(t["leaked_bytes"]) << std::setw(10) << t["leaked_blocks"].get<uint64_t>() << "\n";
}

}  // namespace prof
