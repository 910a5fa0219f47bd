//===- AmpcModule.cpp - the Python module ampc's native half --------------===//
//
// `ampc._ampc`: tools/amp-run/Api.h for Python. Arrays cross as NumPy
// arrays: a C-contiguous feed is read in place (the runtime copies it once,
// into the arena); results are copied out, since the next step overwrites
// them. NumPy has no bfloat16: bf16 values leave as float32 (exactly) and
// an f32 array feeds a bf16 input or state (rounded, or checked exact for
// state). Every error is raised as ampc.Error, a ValueError, with
// amp-run's message.
//
//===----------------------------------------------------------------------===//

#include "tools/amp-run/Api.h"
#include "tools/amp-run/CheckpointOnnx.h"

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstring>

namespace py = pybind11;
namespace rt = ampc::rt;
using ampc::api::CompileRequest;
using ampc::api::Feed;
using ampc::api::Inference;
using ampc::api::Training;

namespace {

/// What Python sees as ampc.Error; under a launch of several ranks its
/// message says whose it is ("rank 1: ...").
struct Error : std::runtime_error {
  explicit Error(const std::string &message)
      : std::runtime_error(ampc::api::rankPrefix() + message) {}
};

void check(const rt::Status &s) {
  if (!s)
    throw Error(s.message());
}

/// The runtime's dtype of a NumPy array, or an error naming `what`.
rt::DType dtypeOf(const py::array &a, const std::string &what) {
  py::dtype d = a.dtype();
  char kind = d.kind();
  size_t size = d.itemsize();
  if (kind == 'f' && size == 4)
    return rt::DType::F32;
  if (kind == 'f' && size == 2)
    return rt::DType::F16;
  if (kind == 'f' && size == 8)
    return rt::DType::F64;
  if (kind == 'i' && size == 8)
    return rt::DType::I64;
  if (kind == 'i' && size == 4)
    return rt::DType::I32;
  if (kind == 'b' && size == 1)
    return rt::DType::I1;
  throw Error(what + ": NumPy dtype " + py::str(d).cast<std::string>() +
              " is none that ampc takes (float32, float16, float64, int64, "
              "int32, bool)");
}

/// A view of `a`'s bytes, which must be C-contiguous and native-endian
/// (ampc/__init__.py makes them so, copying only when they are not).
rt::TensorView viewOf(const py::array &a, const std::string &what) {
  if (!(a.flags() & py::array::c_style))
    throw Error(what + ": the array is not C-contiguous");
  if (a.dtype().byteorder() == '>')
    throw Error(what + ": the array is big-endian");
  rt::TensorView v;
  v.dtype = dtypeOf(a, what);
  v.shape.assign(a.shape(), a.shape() + a.ndim());
  v.data = const_cast<void *>(a.data());
  return v;
}

/// A NumPy copy of `v` (bf16 widened to float32).
py::array arrayOf(const rt::TensorView &v) {
  rt::HostTensor t = rt::copyOf(v, "");
  if (t.dtype == rt::DType::BF16)
    check(rt::convertTo(t, rt::DType::F32));
  const char *format = nullptr;
  switch (t.dtype) {
  case rt::DType::F32:
    format = "float32";
    break;
  case rt::DType::F16:
    format = "float16";
    break;
  case rt::DType::F64:
    format = "float64";
    break;
  case rt::DType::I64:
    format = "int64";
    break;
  case rt::DType::I32:
    format = "int32";
    break;
  case rt::DType::I1:
    format = "bool";
    break;
  case rt::DType::BF16:
    break;
  }
  std::vector<py::ssize_t> shape(t.shape.begin(), t.shape.end());
  py::array out(py::dtype(format), shape);
  if (!t.bytes.empty())
    std::memcpy(out.mutable_data(), t.bytes.data(), t.bytes.size());
  return out;
}

/// `feeds` (name -> C-contiguous array) as views; the arrays stay
/// referenced by the dict for the call.
std::vector<Feed> feedsOf(const py::dict &feeds) {
  std::vector<Feed> out;
  for (auto [key, value] : feeds) {
    std::string name = py::str(key);
    if (!py::isinstance<py::array>(value))
      throw Error("input '" + name + "': not a NumPy array");
    out.emplace_back(name, viewOf(py::reinterpret_borrow<py::array>(value),
                                  "input '" + name + "'"));
  }
  return out;
}

/// Named tensors from a dict of arrays, copied.
std::vector<rt::HostTensor> tensorsOf(const py::dict &d,
                                      const std::string &what) {
  std::vector<rt::HostTensor> out;
  for (auto [key, value] : d) {
    std::string name = py::str(key);
    if (!py::isinstance<py::array>(value))
      throw Error(what + " '" + name + "': not a NumPy array");
    rt::TensorView v = viewOf(py::reinterpret_borrow<py::array>(value),
                              what + " '" + name + "'");
    out.push_back(rt::copyOf(v, name));
  }
  return out;
}

py::dict dictOf(const std::vector<rt::HostTensor> &tensors) {
  py::dict out;
  for (const rt::HostTensor &t : tensors) {
    rt::HostTensor copy = t;
    out[py::str(t.name)] = arrayOf(copy.view());
  }
  return out;
}

/// The request for `model` (a path, or the serialized bytes).
CompileRequest
requestOf(const py::object &model,
          const std::vector<std::pair<std::string, std::string>> &options,
          const py::dict &shapes, const py::dict &binds) {
  CompileRequest r;
  if (py::isinstance<py::bytes>(model)) {
    r.modelBytes = model.cast<std::string>();
  } else {
    // Read by the compile (Api.h), after the ranks of a launch joined.
    r.modelPath = model.cast<std::string>();
  }
  r.options = options;
  for (auto [key, value] : shapes)
    r.shapes.emplace_back(py::str(key), value.cast<std::vector<int64_t>>());
  r.binds = tensorsOf(binds, "bind");
  return r;
}

py::list inputsOf(const std::vector<ampc::api::InputInfo> &inputs) {
  py::list out;
  for (const auto &in : inputs)
    out.append(py::make_tuple(in.name, std::string(rt::name(in.dtype)),
                              py::tuple(py::cast(in.shape))));
  return out;
}

} // namespace

PYBIND11_MODULE(_ampc, m) {
  m.doc() = "ampc's compiler and runtime (tools/amp-run/Api.h)";
  py::register_exception<Error>(m, "Error", PyExc_ValueError);

  py::class_<Training>(m, "_Training")
      .def("inputs", [](const Training &t) { return inputsOf(t.inputs()); })
      .def("step",
           [](Training &t, const py::dict &feeds) {
             std::vector<Feed> views = feedsOf(feeds);
             ampc::api::StepResult r;
             {
               py::gil_scoped_release release;
               check(t.step(views, r));
             }
             return py::make_tuple(r.step, r.loss, r.skipped, r.lossScale);
           })
      .def("outputs",
           [](const Training &t) {
             py::dict out;
             for (const std::string &name : t.outputNames()) {
               rt::TensorView v;
               check(t.output(name, v));
               out[py::str(name)] = arrayOf(v);
             }
             return out;
           })
      .def_property_readonly("steps_done", &Training::stepsDone)
      .def_property_readonly("loss_scale", &Training::lossScale)
      .def_property_readonly("steps_per_epoch", &Training::stepsPerEpoch)
      .def_property_readonly("steps", &Training::runSteps)
      .def_property_readonly("rank", &Training::rank)
      .def_property_readonly("world_size", &Training::worldSize)
      .def_property_readonly("run_label", &Training::runLabel)
      .def_property_readonly("device", &Training::device)
      .def("state",
           [](const Training &t) {
             std::vector<rt::HostTensor> s;
             check(t.state(s));
             return dictOf(s);
           })
      .def("load_state",
           [](Training &t, const py::dict &d) {
             check(t.loadState(tensorsOf(d, "state")));
           })
      .def("wait_for_ranks",
           [](Training &t, double seconds) {
             py::gil_scoped_release release;
             check(t.waitForRanks(seconds));
           })
      .def("save_checkpoint",
           [](Training &t, const std::string &dir) {
             check(t.saveCheckpoint(dir));
           })
      .def("load_checkpoint",
           [](Training &t, const std::string &dir) {
             check(t.loadCheckpoint(dir));
           })
      .def("save_onnx",
           [](const Training &t, const std::string &path) {
             check(t.saveOnnx(path));
           })
      .def("amp_report", &Training::ampReport)
      .def("memory_json", &Training::memoryJson)
      .def("batch", [](Training &t, int64_t s) {
        std::vector<rt::HostTensor> batch;
        check(t.batch(s, batch));
        return dictOf(batch);
      });

  py::class_<Inference>(m, "_Inference")
      .def("inputs", [](const Inference &i) { return inputsOf(i.inputs()); })
      .def("run",
           [](Inference &i, const py::dict &feeds) {
             std::vector<Feed> views = feedsOf(feeds);
             {
               py::gil_scoped_release release;
               check(i.run(views));
             }
             py::dict out;
             for (const std::string &name : i.outputNames()) {
               rt::TensorView v;
               check(i.output(name, v));
               out[py::str(name)] = arrayOf(v);
             }
             return out;
           })
      .def("weights",
           [](const Inference &i) {
             std::vector<rt::HostTensor> w;
             check(i.weights(w));
             return dictOf(w);
           })
      .def("load_weights",
           [](Inference &i, const py::dict &d) {
             check(i.loadWeights(tensorsOf(d, "weight")));
           })
      .def("load_weights_from",
           [](Inference &i, const Training &t) { check(i.loadWeights(t)); })
      .def("amp_report", &Inference::ampReport)
      .def_property_readonly("device", &Inference::device);

  m.def("_compile_training",
        [](const py::object &model,
           const std::vector<std::pair<std::string, std::string>> &options,
           const py::dict &shapes, const py::dict &binds) {
          CompileRequest r = requestOf(model, options, shapes, binds);
          std::unique_ptr<Training> t;
          {
            py::gil_scoped_release release;
            check(Training::compile(r, t));
          }
          return t;
        });
  // The ranks of an MPI launch (Api.h): ampc/__init__.py leaves them at
  // the program's exit, and aborts them all on an exception nothing caught.
  m.def("_launched_as_ranks", &ampc::api::launchedAsRanks);
  m.def("_leave_ranks", [] {
    py::gil_scoped_release release; // MPI_Finalize waits for the others
    ampc::api::leaveRanks();
  });
  m.def("_abort_ranks", &ampc::api::abortRanks);
  m.def("_save_onnx_from_checkpoint", [](const std::string &model,
                                         const std::string &checkpoint,
                                         const std::string &out) {
    ampc::tools::CheckpointOnnxReport r;
    {
      py::gil_scoped_release release;
      check(ampc::tools::saveOnnxFromCheckpoint(model, checkpoint, out, r));
    }
    py::dict d;
    d["step"] = r.step;
    d["written"] = r.written;
    d["kept"] = r.kept;
    return d;
  });
  m.def("_rank_prefix", &ampc::api::rankPrefix);
  m.def("_compile_inference",
        [](const py::object &model,
           const std::vector<std::pair<std::string, std::string>> &options,
           const py::dict &shapes, const py::dict &binds) {
          CompileRequest r = requestOf(model, options, shapes, binds);
          std::unique_ptr<Inference> i;
          {
            py::gil_scoped_release release;
            check(Inference::compile(r, i));
          }
          return i;
        });
}
