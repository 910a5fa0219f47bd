# lit configuration of the ampc test suites (test/ mirrors the source tree).
import os

import lit.formats

config.name = "ampc"
config.test_format = lit.formats.ShTest(not lit_config.isWindows)
config.suffixes = [".mlir", ".test"]
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "Inputs", "unittests"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.ampc_obj_root, "test")

tools = config.ampc_tools_dir
llvm = config.llvm_tools_dir
config.substitutions.append(("%amp-opt", os.path.join(tools, "amp-opt")))
config.substitutions.append(("%amp-translate", os.path.join(tools, "amp-translate")))
config.substitutions.append(("%amp-run", os.path.join(tools, "amp-run")))
config.substitutions.append(("%amp-exec", os.path.join(tools, "amp-exec")))
config.substitutions.append(("%models", config.shared_models))
config.substitutions.append(("%onnxdata", "/usr/share/libonnx-testdata/data"))
config.substitutions.append(("%python", config.python_executable))
# FileCheck, not and count come from LLVM's tool directory.
config.environment["PATH"] = os.pathsep.join(
    [llvm, tools, config.environment.get("PATH", os.environ["PATH"])])

if os.path.isdir(config.shared_models):
    config.available_features.add("shared-models")
# OpenMPI's launcher (scripts/setup.sh installs openmpi-bin): the
# data-parallel tests start ranks with it.
import shutil
if shutil.which("mpirun"):
    config.available_features.add("mpi")
# Debian's dataset-fashion-mnist (scripts/setup.sh installs it).
if os.path.isdir("/usr/share/datasets/fashion-mnist"):
    config.available_features.add("fashion-mnist")

config.environment["FILECHECK_OPTS"] = "--dump-input=fail"
