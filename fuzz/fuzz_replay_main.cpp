// main() of the fuzz_replay_<target> executables: runs the target's LLVMFuzzerTestOneInput on every file named
// on the command line and on every regular file inside each directory named there (sorted, not recursive), so
// ordinary test trees (any compiler, no libFuzzer) re-run the committed corpus and crash reproducers.
// Each file is named on stderr before it runs. Exits 1 when a path cannot be read; a crash or sanitizer report
// ends the process as it would under libFuzzer.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <system_error>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

bool run_file(const std::filesystem::path& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    std::fprintf(stderr, "cannot read %s\n", path.c_str());
    return false;
  }
  const std::vector<char> bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  std::fprintf(stderr, "Running: %s\n", path.c_str());
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  size_t ran = 0;
  for (int a = 1; a < argc; ++a) {
    const std::filesystem::path path(argv[a]);
    std::error_code error;
    if (!std::filesystem::is_directory(path, error)) {
      if (!run_file(path)) return 1;
      ++ran;
      continue;
    }
    std::vector<std::filesystem::path> files;
    for (const auto& entry : std::filesystem::directory_iterator(path, error)) {
      if (entry.is_regular_file()) files.push_back(entry.path());
    }
    if (error) {
      std::fprintf(stderr, "cannot list %s: %s\n", path.c_str(), error.message().c_str());
      return 1;
    }
    std::sort(files.begin(), files.end());
    for (const auto& file : files) {
      if (!run_file(file)) return 1;
      ++ran;
    }
  }
  std::printf("replayed %zu inputs\n", ran);
  return 0;
}
