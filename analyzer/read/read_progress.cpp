#include "read/read_progress.h"

#include <unistd.h>

#include <cstdio>

namespace prof {

ReadProgress::ReadProgress(const std::string &path, uint64_t size) : path_(path), size_(size) {
  if (size >= kMinBytes && isatty(STDERR_FILENO)) next_ = 0;
}

void ReadProgress::update(uint64_t offset) {
  const uint64_t percent = offset * 100 / size_;
  fprintf(stderr, "\rprof-analyze: reading %s: %3u%%", path_.c_str(), unsigned(percent));
  fflush(stderr);
  shown_ = true;
  next_ = (percent + 1) * size_ / 100 + 1;
}

ReadProgress::~ReadProgress() {
  // XXX: "\33[K" erases to the end of the line; the terminal is known to be one.
  if (shown_) fputs("\r\33[K", stderr);
}

}  // namespace prof
