//===- Scratch.h - kernel scratch memory kept between runs ----------------===//
//
// A kernel's temporaries outside the arena (a bf16 operand widened to f32,
// an f32 result before it is rounded, im2col columns, oneDNN's blocked
// layouts) used to be a fresh std::vector per run. For a large tensor that
// costs more than the kernel: the vector is zero-filled, and glibc hands a
// block of megabytes back to the system when it is freed, so every run
// page-faults it in again (a bf16 convolution with a 4 MB f32 result: 3.3 ms
// per run, 1.2 ms with the block kept).
//
// Scratch<T> takes its block from a cache of the calling thread and gives
// it back when it goes out of scope; nothing is zero-filled. The cache
// keeps the blocks its thread has needed at once until the thread ends, as
// a caching allocator does; a request no cached block fits replaces them
// all, so the cache holds about the largest kernel's temporaries.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_CPU_SCRATCH_H
#define AMPC_RUNTIME_CPU_SCRATCH_H

#include <cstddef>
#include <cstdint>

namespace ampc::rt::cpu {

// A block of at least `bytes` bytes, 64-byte aligned, from the calling
// thread's cache (or newly allocated); `capacity` is its real size. Throws
// std::bad_alloc like `new` when memory runs out.
void *acquireScratch(size_t bytes, size_t &capacity);
// Gives a block acquireScratch returned back to the calling thread's cache.
void releaseScratch(void *block, size_t capacity);
// The bytes the calling thread's cache holds (for tests).
size_t cachedScratchBytes();

template <typename T> class Scratch {
public:
  Scratch() = default;
  Scratch(const Scratch &) = delete;
  Scratch &operator=(const Scratch &) = delete;
  ~Scratch() { reset(); }

  // Room for n values (uninitialised); earlier contents are not kept.
  T *resize(size_t n) {
    if (n * sizeof(T) > capacity_) {
      reset();
      data_ = static_cast<T *>(acquireScratch(n * sizeof(T), capacity_));
    }
    size_ = n;
    return data_;
  }
  T *data() { return data_; }
  const T *data() const { return data_; }
  size_t size() const { return size_; }

private:
  void reset() {
    if (data_)
      releaseScratch(data_, capacity_);
    data_ = nullptr;
    capacity_ = size_ = 0;
  }
  T *data_ = nullptr;
  size_t capacity_ = 0, size_ = 0;
};

} // namespace ampc::rt::cpu

#endif // AMPC_RUNTIME_CPU_SCRATCH_H
