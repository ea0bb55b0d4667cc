// ReadProgress: "prof-analyze: reading FILE: N%" on stderr while a large file
// is read, only when stderr is a terminal, so pipes, logs and scripts never
// see it. The line is rewritten in place and erased when reading ends.
#pragma once

#include <cstdint>
#include <string>

namespace prof {

class ReadProgress {
 public:
  static constexpr uint64_t kMinBytes = 8u << 20;  // smaller files read in a blink

  ReadProgress(const std::string &path, uint64_t size);
  ~ReadProgress();
  ReadProgress(const ReadProgress &) = delete;
  ReadProgress &operator=(const ReadProgress &) = delete;

  void at(uint64_t offset) {
    if (offset >= next_) update(offset);
  }

 private:
  void update(uint64_t offset);

  std::string path_;
  uint64_t size_, next_ = UINT64_MAX;  // UINT64_MAX: not shown
  bool shown_ = false;
};

}  // namespace prof
