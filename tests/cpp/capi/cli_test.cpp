// Runs the built `nxrt` binary (NXRT_CLI_PATH) and checks its printed text and exit codes.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "capi/capi_test_util.h"
#include "session/default_models.h"

namespace {

struct CliResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

CliResult run_cli(const std::string& arguments) {
  CliResult result;
  const std::string command = std::string("'") + NXRT_CLI_PATH + "' " + arguments + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return result;
  char buffer[4096];
  size_t n = 0;
  while ((n = fread(buffer, 1, sizeof(buffer), pipe)) > 0) result.output.append(buffer, n);
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

bool has(const CliResult& result, const std::string& text) { return result.output.find(text) != std::string::npos; }

// A version 1.0 .npy of little-endian float32 values.
std::string npy_float32(const std::vector<float>& values, const std::string& shape, bool fortran = false) {
  std::string header = "{'descr': '<f4', 'fortran_order': " + std::string(fortran ? "True" : "False") +
                       ", 'shape': " + shape + ", }";
  header.append(64 - (10 + header.size() + 1) % 64, ' ');
  header += '\n';
  std::string bytes = "\x93NUMPY";
  bytes += '\x01';
  bytes += '\x00';
  bytes += static_cast<char>(header.size() & 0xff);
  bytes += static_cast<char>(header.size() >> 8);
  bytes += header;
  bytes.append(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float));
  return bytes;
}

TEST(Cli, VersionAndHelp) {
  CliResult version = run_cli("--version");
  EXPECT_EQ(version.exit_code, 0);
  EXPECT_EQ(version.output.rfind("nxrt ", 0), 0u) << version.output;
  CliResult help = run_cli("--help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_TRUE(has(help, "export-builtin NAME PATH")) << help.output;
  EXPECT_TRUE(has(help, "simple_add, mlp")) << help.output;
  CliResult unknown = run_cli("frobnicate");
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_TRUE(has(unknown, "[ONNXRuntimeError] : 2 : INVALID_ARGUMENT : unknown command 'frobnicate'"))
      << unknown.output;
}

TEST(Cli, InfoOnBuiltinMlp) {
  CliResult info = run_cli("info builtin:mlp");
  ASSERT_EQ(info.exit_code, 0) << info.output;
  EXPECT_TRUE(has(info, "x: tensor(float) [B,4]")) << info.output;
  EXPECT_TRUE(has(info, "y: tensor(float) [B,3]")) << info.output;
  EXPECT_TRUE(has(info, "opset imports: ai.onnx=21")) << info.output;
  EXPECT_TRUE(has(info, "producer: nxrt")) << info.output;
  EXPECT_TRUE(has(info, "nodes: 6")) << info.output;
  EXPECT_TRUE(has(info, "  MatMul   2\n")) << info.output;
  EXPECT_TRUE(has(info, "  Sigmoid  1\n")) << info.output;
  // Sorted by count, ties by name.
  const size_t add = info.output.find("  Add ");
  const size_t matmul = info.output.find("  MatMul ");
  const size_t relu = info.output.find("  Relu ");
  ASSERT_NE(relu, std::string::npos);
  EXPECT_LT(add, matmul);
  EXPECT_LT(matmul, relu);
  EXPECT_FALSE(has(info, "  W1:")) << "initializers are not inputs";
}

TEST(Cli, ExportBuiltinThenInfoFromFile) {
  const std::string path = nxrt::capi_test::temp_path("cli_simple_add.onnx");
  CliResult exported = run_cli("export-builtin simple_add '" + path + "'");
  ASSERT_EQ(exported.exit_code, 0) << exported.output;
  EXPECT_EQ(nxrt::capi_test::read_file(path), nxrt::simple_add_model());
  CliResult info = run_cli("info '" + path + "'");
  ASSERT_EQ(info.exit_code, 0) << info.output;
  EXPECT_TRUE(has(info, "x: tensor(float) [B]")) << info.output;
  EXPECT_TRUE(has(info, "z: tensor(float) [B]")) << info.output;
  EXPECT_TRUE(has(info, "  Add  1\n")) << info.output;
  std::remove(path.c_str());

  CliResult bad = run_cli("export-builtin resnet " + path);
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_TRUE(has(bad, "unknown builtin model 'resnet'")) << bad.output;
}

TEST(Cli, RunWithoutArgumentsRunsBuiltinDemos) {
  CliResult demo = run_cli("run");
  ASSERT_EQ(demo.exit_code, 0) << demo.output;
  EXPECT_TRUE(has(demo, "== builtin:simple_add ==")) << demo.output;
  EXPECT_TRUE(has(demo, "z: float [4]\n[12. 24. 36. 48.]")) << demo.output;
  EXPECT_TRUE(has(demo, "== builtin:mlp ==")) << demo.output;
  EXPECT_TRUE(has(demo, "y: float [2,3]\n[[")) << demo.output;
  EXPECT_FALSE(has(demo, "MISMATCH")) << demo.output;
  EXPECT_TRUE(has(demo, "latency: median ")) << demo.output;
}

TEST(Cli, RunRandomInputsWithDimAndRepeat) {
  CliResult run = run_cli("run builtin:mlp --dim B=5 --repeat 3 --seed 7 --threads 1");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_TRUE(has(run, "x: float [5,4] random (seed 7)")) << run.output;
  EXPECT_TRUE(has(run, "y: float [5,3]")) << run.output;
  EXPECT_TRUE(has(run, "over 3 runs")) << run.output;
  // Same seed, same numbers.
  CliResult again = run_cli("run builtin:mlp --dim B=5 --seed 7");
  const size_t at = run.output.find("y: float");
  const size_t at_again = again.output.find("y: float");
  ASSERT_NE(at_again, std::string::npos) << again.output;
  EXPECT_EQ(run.output.substr(at, run.output.find("latency") - at),
            again.output.substr(at_again, again.output.find("latency") - at_again));
}

TEST(Cli, ProfilePrintsOpTypesAndSlowestNodes) {
  CliResult run = run_cli("run builtin:mlp --dim B=5 --repeat 4 --threads 1 --profile");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_TRUE(has(run, "profile: 4 runs, node time")) << run.output;
  EXPECT_TRUE(has(run, "op type")) << run.output;
  EXPECT_TRUE(has(run, "slowest nodes:")) << run.output;
  CliResult plain = run_cli("run builtin:mlp --dim B=5 --threads 1");
  EXPECT_FALSE(has(plain, "profile:")) << plain.output;
}

TEST(Cli, RunWithNpyInputsWritesNpyOutputs) {
  const std::string x = nxrt::capi_test::write_file("cli_x.npy", npy_float32({1, 2, 3, 4}, "(4,)"));
  const std::string y = nxrt::capi_test::write_file("cli_y.npy", npy_float32({10, 20, 30, 40}, "(4,)"));
  const std::string out_dir = nxrt::capi_test::temp_path("cli_outputs");
  CliResult run = run_cli("run builtin:simple_add --input x=" + x + " --input y=" + y + " --output-dir " + out_dir);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_TRUE(has(run, "x: float [4] from " + x)) << run.output;
  EXPECT_TRUE(has(run, "[12. 24. 36. 48.]")) << run.output;
  const std::string z = nxrt::capi_test::read_file(out_dir + "/z.npy");
  ASSERT_GT(z.size(), 16u);
  EXPECT_EQ(z.substr(0, 6), "\x93NUMPY");
  EXPECT_NE(z.find("'descr': '<f4', 'fortran_order': False, 'shape': (4,)"), std::string::npos) << z;
  EXPECT_EQ((z.size() - 16) % 64, 0u);  // header padded to 64 bytes
  std::vector<float> values(4);
  std::memcpy(values.data(), z.data() + z.size() - 16, 16);
  EXPECT_EQ(values, (std::vector<float>{12, 24, 36, 48}));

  // The written file round-trips as an input.
  CliResult again = run_cli("run builtin:simple_add --input x=" + out_dir + "/z.npy --input y=" + y);
  EXPECT_TRUE(has(again, "[34. 68. 102. 136.]")) << again.output;
  std::remove(x.c_str());
  std::remove(y.c_str());
}

TEST(Cli, ErrorsPrintStatusAndExitOne) {
  CliResult missing = run_cli("run /nonexistent/model.onnx");
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_TRUE(has(missing, "[ONNXRuntimeError] : 3 : NO_SUCHFILE : ")) << missing.output;

  const std::string garbage = nxrt::capi_test::write_file("cli_garbage.onnx", "\xff\xff\xff garbage");
  CliResult bad_model = run_cli("info " + garbage);
  EXPECT_EQ(bad_model.exit_code, 1);
  EXPECT_TRUE(has(bad_model, "[ONNXRuntimeError] : 7 : INVALID_PROTOBUF : ")) << bad_model.output;

  const std::string fortran = nxrt::capi_test::write_file("cli_fortran.npy", npy_float32({1, 2, 3, 4}, "(2, 2)", true));
  CliResult bad_npy = run_cli("run builtin:simple_add --input x=" + fortran);
  EXPECT_EQ(bad_npy.exit_code, 1);
  EXPECT_TRUE(has(bad_npy, "fortran_order")) << bad_npy.output;

  const std::string truncated = nxrt::capi_test::write_file("cli_short.npy", npy_float32({1, 2}, "(4,)"));
  CliResult short_npy = run_cli("run builtin:simple_add --input x=" + truncated);
  EXPECT_EQ(short_npy.exit_code, 1);
  EXPECT_TRUE(has(short_npy, "needs 16 data bytes, file has 8")) << short_npy.output;

  const std::string matrix = nxrt::capi_test::write_file("cli_2d.npy", npy_float32({1, 2, 3, 4}, "(2, 2)"));
  CliResult wrong_rank = run_cli("run builtin:simple_add --input x=" + matrix);
  EXPECT_EQ(wrong_rank.exit_code, 1);
  EXPECT_TRUE(has(wrong_rank, ": 2 : INVALID_ARGUMENT : ")) << wrong_rank.output;

  CliResult unknown_input = run_cli("run builtin:simple_add --input w=" + truncated);
  EXPECT_EQ(unknown_input.exit_code, 1);
  EXPECT_TRUE(has(unknown_input, "'w', which is not an input")) << unknown_input.output;

  CliResult bad_builtin = run_cli("run builtin:nope");
  EXPECT_EQ(bad_builtin.exit_code, 1);
  EXPECT_TRUE(has(bad_builtin, "unknown builtin model 'nope'")) << bad_builtin.output;

  CliResult bad_flag = run_cli("run builtin:mlp --repeat 0");
  EXPECT_EQ(bad_flag.exit_code, 1);
  EXPECT_TRUE(has(bad_flag, "--repeat")) << bad_flag.output;
}

}  // namespace
