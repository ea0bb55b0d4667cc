#include "model/frame.h"

namespace prof {

std::string basename_of(const std::string &path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string Frame::label() const {
  if (file.empty() || kind == Kind::Guest) return function;
  return function + " (" + basename_of(file) + (line ? ":" + std::to_string(line) : "") + ")";
}

}  // namespace prof
