//===- Tensor.h - tensor views and kernel attributes ----------------------===//
//
// What a kernel sees: typed views of arena memory and the attributes of the
// graph op it implements. Nothing here owns memory or knows the Program
// format, so kernels can be tested on their own.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_TENSOR_H
#define AMPC_RUNTIME_TENSOR_H

#include "runtime/DType.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ampc::rt {

using Shape = std::vector<int64_t>;

int64_t numElements(const Shape &shape);
std::string str(const Shape &shape); // "[2, 3]"
// Numpy broadcasting: the common shape of `a` and `b` (false if none), and
// whether `from` broadcasts to exactly `to`.
bool broadcastShapes(const Shape &a, const Shape &b, Shape &out);
bool broadcastsTo(const Shape &from, const Shape &to);

struct TensorView {
  DType dtype = DType::F32;
  Shape shape;
  void *data = nullptr; // null while a kernel is only being checked

  int64_t numElements() const { return rt::numElements(shape); }
  size_t byteSize() const { return numElements() * sizeOf(dtype); }
  int64_t rank() const { return static_cast<int64_t>(shape.size()); }
  template <typename T> T *as() const { return static_cast<T *>(data); }
  std::string typeStr() const; // "tensor<2x3xf32>"
};

struct AttrValue {
  enum class Kind { Int, Float, String, Ints } kind = Kind::Int;
  int64_t i = 0;
  double f = 0;
  std::string s;
  std::vector<int64_t> ints;
};

// The attributes of one graph op, as the compiler wrote them. Booleans are
// Ints (0/1). An optional attribute the op did not set is absent.
class Attrs {
public:
  void setInt(const std::string &k, int64_t v);
  void setFloat(const std::string &k, double v);
  void setString(const std::string &k, std::string v);
  void setInts(const std::string &k, std::vector<int64_t> v);

  bool has(const std::string &k) const { return map_.count(k) != 0; }
  const AttrValue *find(const std::string &k) const;
  // Reads of attributes the kernel's check has found present and of their
  // kind (ops/AttrReaders.h); an absent one reads as 0 or "". The runtime
  // keeps no defaults: a Program holds every attribute (version 2).
  int64_t getInt(const std::string &k) const;
  double getFloat(const std::string &k) const;
  std::string getString(const std::string &k) const;
  std::vector<int64_t> getInts(const std::string &k) const;
  const std::map<std::string, AttrValue> &all() const { return map_; }

private:
  std::map<std::string, AttrValue> map_;
};

} // namespace ampc::rt

#endif // AMPC_RUNTIME_TENSOR_H
