// Span: a read-only view of a caller's array, so an encoder can take a list
// (stack frames, stats counters) without the caller allocating one
// (C++17 has no std::span).
#pragma once

#include <cstddef>

namespace prof {

template <class T>
class Span {
 public:
  Span() = default;
  Span(const T *data, size_t size) : data_(data), size_(size) {}
  template <size_t N>
  Span(const T (&array)[N]) : data_(array), size_(N) {}

  const T *data() const { return data_; }
  size_t size() const { return size_; }
  const T *begin() const { return data_; }
  const T *end() const { return data_ + size_; }

 private:
  const T *data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace prof
