// JSON text for every --json output and the exports: a name that is not
// UTF-8 (a Latin-1 script's file name, carried by the stream as its bytes)
// is written with U+FFFD where nlohmann would otherwise refuse the whole
// document.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace prof {

inline std::string json_text(const nlohmann::json &j, int indent = -1) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace prof
