#include "model/stack_values.h"

namespace prof {

StackValues stack_values(Profile &profile) {
  StackValues out;
  if (profile.has_memory()) {
    out.types = {{"alloc_objects", "count"},
                 {"alloc_space", "bytes"},
                 {"inuse_objects", "count"},
                 {"inuse_space", "bytes"},
                 {"peak_space", "bytes"}};
    const bool measured = profile.memory().measured_contexts() > 0;
    if (measured)
      out.types.insert(out.types.end(), {{"access_count", "count"},
                                         {"access_density", "accesses/byte/s"},
                                         {"lifetime", "milliseconds"},
                                         {"lifetime_overlaps", "count"},
                                         {"cpu_migrations", "count"}});
    const std::vector<StackStats> &stacks = profile.memory().stacks();
    for (uint32_t id = 0; id < stacks.size(); id++) {
      const StackStats &s = stacks[id];
      if (s.allocs == 0) continue;
      const double per_block = s.alloc_count / double(s.allocs);
      out.nodes.push_back(profile.node(id));
      out.values.insert(out.values.end(), {s.alloc_count, s.alloc_bytes,
                                           double(s.live_blocks) * per_block, s.live_bytes,
                                           s.peak_bytes});
      if (measured)
        out.values.insert(out.values.end(),
                          {measures_of(s).accesses, access_density(s), measures_of(s).lifetime_ms,
                           measures_of(s).lifetime_overlaps, measures_of(s).cpu_migrations});
    }
    return out;
  }
  out.types = {{"samples", "count"}};
  for (const CpuModel::Stack &s : profile.cpu().stacks())
    if (s.samples > 0) {
      out.nodes.push_back(s.node);
      out.values.push_back(s.samples);
      out.vmstates.push_back(s.vmstate);
    }
  return out;
}

}  // namespace prof
