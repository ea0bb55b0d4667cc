// ThreadChoice: the threads --thread names: those with a name the program
// gave them (thread-name records; the name a thread has when its event or
// sample is made), or the one thread of a tid ("4427" or "tid 4427", as the
// summary names an unnamed thread).
#pragma once

#include <cstdint>
#include <string>

namespace prof {

class ThreadChoice {
 public:
  // "" chooses every thread.
  explicit ThreadChoice(const std::string &spec) : spec_(spec) {
    const std::string digits = spec.rfind("tid ", 0) == 0 ? spec.substr(4) : spec;
    if (!digits.empty() && digits.size() <= 9 &&
        digits.find_first_not_of("0123456789") == std::string::npos)
      tid_ = std::stoull(digits);
  }
  bool all() const { return spec_.empty(); }
  bool chooses(uint64_t tid, const std::string &name) const {
    return spec_.empty() || name == spec_ || (tid_ != 0 && tid == tid_);
  }

 private:
  std::string spec_;
  uint64_t tid_ = 0;  // 0: the spec is no tid
};

}  // namespace prof
