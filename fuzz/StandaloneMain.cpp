//===- StandaloneMain.cpp - runs a fuzz target over saved inputs ----------===//
//
// Builds without libFuzzer (the default compiler, no -fsanitize=fuzzer)
// link the fuzz targets with this main, so that the regression inputs in
// fuzz/regressions/ run as ordinary tests everywhere. Arguments are files
// or directories (each file in them, sorted); each input runs once.
//
//===----------------------------------------------------------------------===//

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

namespace fs = std::filesystem;

int main(int argc, char **argv) {
  std::vector<fs::path> files;
  for (int i = 1; i < argc; ++i) {
    fs::path p(argv[i]);
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
      std::vector<fs::path> inDir;
      for (const auto &entry : fs::directory_iterator(p, ec))
        if (entry.is_regular_file())
          inDir.push_back(entry.path());
      if (ec) {
        std::fprintf(stderr, "%s: cannot list '%s': %s\n", argv[0], argv[i],
                     ec.message().c_str());
        return 2;
      }
      std::sort(inDir.begin(), inDir.end());
      files.insert(files.end(), inDir.begin(), inDir.end());
    } else if (fs::is_regular_file(p, ec)) {
      files.push_back(p);
    } else {
      std::fprintf(stderr, "%s: '%s' is not a file or directory\n", argv[0],
                   argv[i]);
      return 2;
    }
  }
  for (const fs::path &f : files) {
    std::ifstream in(f, std::ios::binary);
    std::vector<char> bytes((std::istreambuf_iterator<char>(in)),
                            std::istreambuf_iterator<char>());
    if (!in.eof() && in.fail()) {
      std::fprintf(stderr, "%s: cannot read '%s'\n", argv[0], f.c_str());
      return 2;
    }
    // Printed first, so that a crash names the input that caused it.
    std::fprintf(stderr, "running %s (%zu bytes)\n", f.c_str(), bytes.size());
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t *>(bytes.data()),
                           bytes.size());
  }
  std::fprintf(stderr, "ran %zu inputs\n", files.size());
  return 0;
}
