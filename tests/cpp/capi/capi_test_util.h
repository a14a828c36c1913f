// Helpers shared by the C API, C++ wrapper and CLI tests.
#pragma once

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <iterator>
#include <string>

#include <unistd.h>

#include "nxrt/nxrt.h"

namespace nxrt::capi_test {

struct StatusDeleter {
  void operator()(NxrtStatus* status) const { nxrt_release_status(status); }
};
// Owns a returned status so failing assertions never leak it.
using StatusPtr = std::unique_ptr<NxrtStatus, StatusDeleter>;

inline std::string temp_path(const std::string& name) {
  return ::testing::TempDir() + "nxrt_capi_" + std::to_string(::getpid()) + "_" + name;
}

inline std::string write_file(const std::string& name, const std::string& bytes) {
  const std::string path = temp_path(name);
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return path;
}

inline std::string read_file(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
}

}  // namespace nxrt::capi_test

// Asserts that a C call succeeded, printing the status string otherwise.
#define ASSERT_NXRT_OK(call)                                                   \
  do {                                                                         \
    ::nxrt::capi_test::StatusPtr nxrt_status_(call);                           \
    ASSERT_EQ(nxrt_status_, nullptr) << nxrt_status_string(nxrt_status_.get()); \
  } while (0)
