// The module-load record (ext.h) of a loaded object, as both streams write it.
#pragma once

#include <string_view>

#include "ext.h"
#include "module_map.h"

namespace prof {

inline ext::ModuleLoadView module_load_record(const ModuleInfo &m) {
  return {m.base, m.size, m.path,
          std::string_view(reinterpret_cast<const char *>(m.build_id), m.build_id_len)};
}

}  // namespace prof
