// Test helpers for CPU kernels: build a graph::Node, look up its kernel, create, reshape, allocate, run.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "core/dispatch.h"
#include "core/tensor.h"
#include "core/thread_pool.h"
#include "ep/cpu/kernel.h"
#include "graph/graph.h"

namespace nxrt::cpu::testing {

class NodeBuilder {
 public:
  explicit NodeBuilder(std::string op_type, int opset = 18) {
    node_.op_type = std::move(op_type);
    node_.name = "n";
    node_.opset = opset;
    node_.outputs = {100};
  }
  NodeBuilder& name(std::string value) {
    node_.name = std::move(value);
    return *this;
  }
  NodeBuilder& attr_int(const std::string& name, int64_t value) {
    auto& a = add(name, graph::Attribute::Type::kInt);
    a.i = value;
    return *this;
  }
  NodeBuilder& attr_float(const std::string& name, float value) {
    auto& a = add(name, graph::Attribute::Type::kFloat);
    a.f = value;
    return *this;
  }
  NodeBuilder& attr_string(const std::string& name, std::string value) {
    auto& a = add(name, graph::Attribute::Type::kString);
    a.s = std::move(value);
    return *this;
  }
  NodeBuilder& attr_ints(const std::string& name, std::vector<int64_t> values) {
    auto& a = add(name, graph::Attribute::Type::kInts);
    a.ints = std::move(values);
    return *this;
  }
  NodeBuilder& attr_floats(const std::string& name, std::vector<float> values) {
    auto& a = add(name, graph::Attribute::Type::kFloats);
    a.floats = std::move(values);
    return *this;
  }
  NodeBuilder& attr_strings(const std::string& name, std::vector<std::string> values) {
    auto& a = add(name, graph::Attribute::Type::kStrings);
    a.strings = std::move(values);
    return *this;
  }
  NodeBuilder& attr_tensor(const std::string& name, Tensor value) {
    auto& a = add(name, graph::Attribute::Type::kTensor);
    a.t = std::move(value);
    return *this;
  }
  const graph::Node& node() const { return node_; }

 private:
  graph::Attribute& add(const std::string& name, graph::Attribute::Type type) {
    graph::Attribute attribute;
    attribute.name = name;
    attribute.type = type;
    node_.attributes.push_back(std::move(attribute));
    return node_.attributes.back();
  }
  graph::Node node_;
};

template <class T>
Tensor make_tensor(Shape shape, const std::vector<T>& values) {
  auto tensor = Tensor::allocate(data_type_of<T>, std::move(shape));
  EXPECT_TRUE(tensor.has_value()) << tensor.status().to_string();
  EXPECT_EQ(static_cast<size_t>(tensor->numel()), values.size());
  for (size_t i = 0; i < values.size(); ++i) tensor->template data<T>()[i] = values[i];
  return *tensor;
}

// Float16/BFloat16 from float literals.
template <class H>
Tensor make_half_tensor(Shape shape, const std::vector<float>& values) {
  std::vector<H> halves;
  for (float v : values) halves.push_back(H(v));
  return make_tensor<H>(std::move(shape), halves);
}

template <class T>
std::vector<T> to_vector(const Tensor& tensor) {
  EXPECT_EQ(tensor.dtype(), data_type_of<T>);
  const T* data = tensor.template data<T>();
  return std::vector<T>(data, data + tensor.numel());
}

inline std::vector<float> to_float_vector(const Tensor& tensor) {
  std::vector<float> out;
  visit_dtype<FloatTypes>(tensor.dtype(), [&]<class T>() {
    for (int64_t i = 0; i < tensor.numel(); ++i) out.push_back(static_cast<float>(tensor.data<T>()[i]));
  });
  return out;
}

// Runs one node on `inputs` (an invalid Tensor is an absent optional input) with a pool of `threads`.
// Inputs listed in `constant` are also passed to create() as constant inputs.
inline Expected<std::vector<Tensor>> run_kernel(const graph::Node& node_in, const std::vector<Tensor>& inputs,
                                                int threads = 1, std::vector<bool> constant = {}) {
  graph::Node node = node_in;
  node.inputs.clear();
  for (size_t i = 0; i < inputs.size(); ++i) {
    node.inputs.push_back(inputs[i].is_valid() ? static_cast<int>(i) : graph::kNoValue);
  }
  const KernelDef* def = find_kernel(node.domain, node.op_type, node.opset);
  if (def == nullptr) return missing_kernel_error(node);
  std::vector<const Tensor*> pointers;
  KernelInfo info{node, {}, std::vector<DataType>(node.outputs.size(), DataType::kUndefined), {}};
  for (size_t i = 0; i < inputs.size(); ++i) {
    pointers.push_back(inputs[i].is_valid() ? &inputs[i] : nullptr);
    info.input_types.push_back(inputs[i].dtype());
    info.constant_inputs.push_back(i < constant.size() && constant[i] ? &inputs[i] : nullptr);
  }
  if (def->type_input >= 0 && static_cast<size_t>(def->type_input) < inputs.size()) {
    const DataType type = inputs[static_cast<size_t>(def->type_input)].dtype();
    if (((def->types >> static_cast<int>(type)) & 1u) == 0) {
      return missing_kernel_error(node, std::string("type ") + std::string(data_type_name(type)));
    }
  }
  TRY_ASSIGN(std::unique_ptr<Kernel> kernel, def->create(info));
  std::vector<OutputDesc> descs;
  TRY(kernel->reshape(pointers, descs));
  std::vector<Tensor> outputs;
  if (kernel->alias_input() >= 0) {
    outputs.push_back(inputs[static_cast<size_t>(kernel->alias_input())].reshaped(descs[0].shape));
    return outputs;
  }
  for (const OutputDesc& desc : descs) {
    TRY_ASSIGN(Tensor tensor, Tensor::allocate(desc.dtype, desc.shape));
    outputs.push_back(std::move(tensor));
  }
  ThreadPool pool(threads);
  TRY(kernel->run(pointers, outputs, pool));
  return outputs;
}

// Single-output convenience; fails the test when the run fails.
inline Tensor run_one(const graph::Node& node, const std::vector<Tensor>& inputs, int threads = 1) {
  auto outputs = run_kernel(node, inputs, threads);
  EXPECT_TRUE(outputs.has_value()) << outputs.status().to_string();
  if (!outputs.has_value() || outputs->empty()) return Tensor();
  return (*outputs)[0];
}

}  // namespace nxrt::cpu::testing
