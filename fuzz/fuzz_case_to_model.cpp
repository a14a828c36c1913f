// Decodes one fuzz input and writes the model it stands for, so a crash reproducer can be inspected with the
// onnx tools or `nxrt info`:
//   fuzz_case_to_model kernel|graph INPUT OUTPUT.onnx
// Prints the optimization level, whether the case runs twice, and each feed's name, dtype and shape (and the
// first 16 values of int32/int64 feeds).
//   fuzz_case_to_model ops
// Lists the ops the fuzzers build (domain, op type, first and last opset of each registry row), one row a line,
// tab-separated: fuzz/make_corpus.py writes seeds only for these.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_model_builder.h"
#include "fuzz_op_catalog.h"

int main(int argc, char** argv) {
  if (argc == 2 && std::string_view(argv[1]) == "ops") {
    const nxrt::fuzz::OpCatalog& catalog = nxrt::fuzz::OpCatalog::get();
    for (size_t i = 0; i < catalog.size(); ++i) {
      const nxrt::fuzz::CatalogOp& op = catalog.op(i);
      for (const nxrt::cpu::KernelDef* row : op.rows) {
        std::printf("%s\t%s\t%d\t%d\n", std::string(op.domain).c_str(), std::string(op.op_type).c_str(),
                    row->since_opset, std::min(row->last_opset, nxrt::fuzz::max_fuzz_opset(op.domain)));
      }
    }
    return 0;
  }
  if (argc != 4 || (std::string_view(argv[1]) != "kernel" && std::string_view(argv[1]) != "graph")) {
    std::fprintf(stderr, "usage: %s kernel|graph INPUT OUTPUT.onnx | %s ops\n", argv[0], argv[0]);
    return 2;
  }
  std::ifstream input(argv[2], std::ios::binary);
  if (!input) {
    std::fprintf(stderr, "cannot read %s\n", argv[2]);
    return 1;
  }
  const std::vector<char> bytes((std::istreambuf_iterator<char>(input)), std::istreambuf_iterator<char>());
  const std::span<const uint8_t> data(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  const nxrt::fuzz::FuzzCase fuzz_case = std::string_view(argv[1]) == "kernel" ? nxrt::fuzz::decode_kernel_case(data)
                                                                               : nxrt::fuzz::decode_graph_case(data);
  std::ofstream output(argv[3], std::ios::binary);
  output << nxrt::onnx::write::encode_model(fuzz_case.model);
  if (!output) {
    std::fprintf(stderr, "cannot write %s\n", argv[3]);
    return 1;
  }
  std::printf("graph_optimization_level %d, runs %d\n", fuzz_case.graph_optimization_level,
              fuzz_case.run_twice ? 2 : 1);
  for (size_t i = 0; i < fuzz_case.feeds.size(); ++i) {
    const nxrt::Value& feed = fuzz_case.feeds[i];
    const std::string shape = feed.is_tensor() ? nxrt::shape_to_string(feed.tensor().shape()) : "?";
    std::printf("feed %s: %s %s", fuzz_case.feed_names[i].c_str(),
                std::string(nxrt::data_type_name(feed.elem_type())).c_str(), shape.c_str());
    const bool int64 = feed.elem_type() == nxrt::DataType::kInt64;
    if (feed.is_tensor() && (int64 || feed.elem_type() == nxrt::DataType::kInt32)) {
      const nxrt::Tensor& tensor = feed.tensor();
      for (int64_t e = 0; e < std::min<int64_t>(tensor.numel(), 16); ++e) {
        const int64_t value = int64 ? tensor.data<int64_t>()[e] : tensor.data<int32_t>()[e];
        std::printf(" %lld", static_cast<long long>(value));
      }
    }
    std::printf("\n");
  }
  return 0;
}
