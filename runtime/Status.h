//===- Status.h - errors as values ----------------------------------------===//
//
// The runtime never aborts on user input: every fallible call returns a
// Status whose message names the thing (program, kernel, tensor, file) and
// what is wrong with it.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_STATUS_H
#define AMPC_RUNTIME_STATUS_H

#include <string>
#include <utility>

namespace ampc::rt {

class [[nodiscard]] Status {
public:
  Status() = default;
  static Status ok() { return Status(); }
  static Status error(std::string message) {
    Status s;
    s.failed_ = true;
    s.message_ = std::move(message);
    return s;
  }
  bool isOk() const { return !failed_; }
  explicit operator bool() const { return !failed_; }
  const std::string &message() const { return message_; }
  // Prefixes context ("kernel 3 (gemm 'fc1')") to an error; ok stays ok.
  Status withContext(const std::string &context) const {
    return failed_ ? error(context + ": " + message_) : *this;
  }

private:
  bool failed_ = false;
  std::string message_;
};

#define AMPC_RETURN_IF_ERROR(expr)                                             \
  do {                                                                         \
    ::ampc::rt::Status ampcStatus_ = (expr);                                   \
    if (!ampcStatus_)                                                          \
      return ampcStatus_;                                                      \
  } while (0)

} // namespace ampc::rt

#endif // AMPC_RUNTIME_STATUS_H
