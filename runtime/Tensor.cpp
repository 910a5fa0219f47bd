//===- Tensor.cpp - shapes, views and attributes --------------------------===//
#include "runtime/Tensor.h"

namespace ampc::rt {

int64_t numElements(const Shape &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

std::string str(const Shape &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

bool broadcastShapes(const Shape &a, const Shape &b, Shape &out) {
  size_t rank = std::max(a.size(), b.size());
  Shape r(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1)
      return false;
    r[i] = da == 1 ? db : da;
  }
  out = std::move(r);
  return true;
}

bool broadcastsTo(const Shape &from, const Shape &to) {
  if (from.size() > to.size())
    return false;
  size_t off = to.size() - from.size();
  for (size_t i = 0; i < from.size(); ++i)
    if (from[i] != 1 && from[i] != to[off + i])
      return false;
  return true;
}

std::string TensorView::typeStr() const {
  std::string s = "tensor<";
  for (int64_t d : shape)
    s += std::to_string(d) + "x";
  return s + std::string(name(dtype)) + ">";
}

void Attrs::setInt(const std::string &k, int64_t v) {
  AttrValue a;
  a.kind = AttrValue::Kind::Int;
  a.i = v;
  map_[k] = std::move(a);
}
void Attrs::setFloat(const std::string &k, double v) {
  AttrValue a;
  a.kind = AttrValue::Kind::Float;
  a.f = v;
  map_[k] = std::move(a);
}
void Attrs::setString(const std::string &k, std::string v) {
  AttrValue a;
  a.kind = AttrValue::Kind::String;
  a.s = std::move(v);
  map_[k] = std::move(a);
}
void Attrs::setInts(const std::string &k, std::vector<int64_t> v) {
  AttrValue a;
  a.kind = AttrValue::Kind::Ints;
  a.ints = std::move(v);
  map_[k] = std::move(a);
}

const AttrValue *Attrs::find(const std::string &k) const {
  auto it = map_.find(k);
  return it == map_.end() ? nullptr : &it->second;
}
int64_t Attrs::getInt(const std::string &k) const {
  const AttrValue *a = find(k);
  return a ? a->i : 0;
}
double Attrs::getFloat(const std::string &k) const {
  const AttrValue *a = find(k);
  return a ? a->f : 0;
}
std::string Attrs::getString(const std::string &k) const {
  const AttrValue *a = find(k);
  return a ? a->s : std::string();
}
std::vector<int64_t> Attrs::getInts(const std::string &k) const {
  const AttrValue *a = find(k);
  return a ? a->ints : std::vector<int64_t>{};
}

} // namespace ampc::rt
