#include "model/frame.h"

namespace prof {

std::string basename_of(const std::string &path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string printable(std::string name) {
  for (char &c : name) {
    const auto b = static_cast<unsigned char>(c);
    if ((b < 0x20 && c != '\n' && c != '\t') || b == 0x7f) c = '?';
  }
  return name;
}

std::string Frame::label() const {
  if (file.empty() || kind == Kind::Guest) return function;
  return function + " (" + basename_of(file) + (line ? ":" + std::to_string(line) : "") + ")";
}

}  // namespace prof
