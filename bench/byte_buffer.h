// ByteBuffer: the input and output buffer of a connection. A window [begin, end) over one
// heap block that grows by doubling and slides back to the front when it empties, so steady
// traffic neither allocates nor zero-fills (std::string::resize would clear every read's
// space first).
#pragma once

#include <cstddef>
#include <cstring>
#include <memory>
#include <string_view>

namespace holdfast::bench {

class ByteBuffer {
 public:
  explicit ByteBuffer(std::size_t capacity = 16384)
      : data_(new char[capacity]), capacity_(capacity) {}

  std::string_view view() const { return {data_.get() + begin_, end_ - begin_}; }
  std::size_t size() const { return end_ - begin_; }
  bool empty() const { return begin_ == end_; }

  // Drops `n` bytes from the front (a parsed reply, a written chunk).
  void consume(std::size_t n) {
    begin_ += n;
    if (begin_ == end_) begin_ = end_ = 0;
  }

  // Room for at least `n` more bytes at the back; write there, then commit() what was used.
  char* reserve(std::size_t n) {
    if (capacity_ - end_ >= n) return data_.get() + end_;
    const std::size_t used = end_ - begin_;
    if (begin_ > 0 && capacity_ - used >= n) {
      std::memmove(data_.get(), data_.get() + begin_, used);
    } else {
      std::size_t cap = capacity_ * 2;
      while (cap - used < n) cap *= 2;
      std::unique_ptr<char[]> bigger(new char[cap]);
      std::memcpy(bigger.get(), data_.get() + begin_, used);
      data_ = std::move(bigger);
      capacity_ = cap;
    }
    begin_ = 0;
    end_ = used;
    return data_.get() + end_;
  }
  void commit(std::size_t n) { end_ += n; }
  std::size_t room() const { return capacity_ - end_; }

  void append(std::string_view s) {
    std::memcpy(reserve(s.size()), s.data(), s.size());
    commit(s.size());
  }
  void clear() { begin_ = end_ = 0; }

 private:
  std::unique_ptr<char[]> data_;
  std::size_t capacity_;
  std::size_t begin_ = 0;
  std::size_t end_ = 0;
};

}  // namespace holdfast::bench
