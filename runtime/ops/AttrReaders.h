//===- AttrReaders.h - typed reads of a call's attributes -----------------===//
//
// How every check and every backend reads an op's attributes: by key and
// kind, with a message naming the attribute when it is missing or of
// another kind.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_OPS_ATTRREADERS_H
#define AMPC_RUNTIME_OPS_ATTRREADERS_H

#include "runtime/Status.h"
#include "runtime/Tensor.h"

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

namespace ampc::rt::ops {

inline const char *kindName(AttrValue::Kind k) {
  switch (k) {
  case AttrValue::Kind::Int:
    return "an integer";
  case AttrValue::Kind::Float:
    return "a float";
  case AttrValue::Kind::String:
    return "a string";
  case AttrValue::Kind::Ints:
    return "an integer list";
  }
  return "?";
}

inline Status attrOfKind(const Attrs &attrs, const std::string &key,
                         AttrValue::Kind kind, bool required,
                         const AttrValue *&out) {
  out = attrs.find(key);
  if (!out) {
    if (required)
      return Status::error("attribute '" + key + "' is missing");
    return Status::ok();
  }
  if (out->kind != kind)
    return Status::error("attribute '" + key + "' must be " + kindName(kind) +
                         ", got " + kindName(out->kind));
  return Status::ok();
}

// Every attribute a kernel reads is in its call: the compiler writes each
// with its default (Program version 2), so a missing one is an error here,
// and no default is restated in the runtime.
inline Status getInt(const Attrs &attrs, const std::string &key, int64_t &out) {
  const AttrValue *a;
  AMPC_RETURN_IF_ERROR(
      attrOfKind(attrs, key, AttrValue::Kind::Int, /*required=*/true, a));
  out = a->i;
  return Status::ok();
}
inline Status getBool(const Attrs &attrs, const std::string &key, bool &out) {
  int64_t v;
  AMPC_RETURN_IF_ERROR(getInt(attrs, key, v));
  if (v != 0 && v != 1)
    return Status::error("attribute '" + key + "' must be 0 or 1, got " +
                         std::to_string(v));
  out = v == 1;
  return Status::ok();
}
inline Status getFloat(const Attrs &attrs, const std::string &key,
                       double &out) {
  const AttrValue *a;
  AMPC_RETURN_IF_ERROR(
      attrOfKind(attrs, key, AttrValue::Kind::Float, /*required=*/true, a));
  out = a->f;
  return Status::ok();
}
inline Status getString(const Attrs &attrs, const std::string &key,
                        std::string &out) {
  const AttrValue *a;
  AMPC_RETURN_IF_ERROR(
      attrOfKind(attrs, key, AttrValue::Kind::String, /*required=*/true, a));
  out = a->s;
  return Status::ok();
}
inline Status getInts(const Attrs &attrs, const std::string &key,
                      std::vector<int64_t> &out) {
  const AttrValue *a;
  AMPC_RETURN_IF_ERROR(
      attrOfKind(attrs, key, AttrValue::Kind::Ints, /*required=*/true, a));
  out = a->ints;
  return Status::ok();
}

// A float attribute's value as messages print it.
inline std::string num(double v) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g", v);
  return text;
}

} // namespace ampc::rt::ops

#endif // AMPC_RUNTIME_OPS_ATTRREADERS_H
