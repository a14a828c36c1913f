#include <map>
#include <random>
#include <string>

#include "ep/cpu/kernel_test_util.h"

namespace nxrt::cpu::testing {
namespace {

graph::Node einsum_node(const std::string& equation, int opset = 12) {
  return NodeBuilder("Einsum", opset).attr_string("equation", equation).node();
}

// Naive reference for explicit equations of letters only: loops over every assignment of every label.
std::vector<double> reference(const std::string& equation, const std::vector<Shape>& shapes,
                              const std::vector<std::vector<double>>& values, Shape& out_shape) {
  const size_t arrow = equation.find("->");
  std::vector<std::string> terms;
  std::string lhs = equation.substr(0, arrow);
  size_t start = 0;
  while (true) {
    const size_t comma = lhs.find(',', start);
    terms.push_back(lhs.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  const std::string out = equation.substr(arrow + 2);
  std::map<char, int64_t> size;
  for (size_t i = 0; i < terms.size(); ++i) {
    for (size_t a = 0; a < terms[i].size(); ++a) size[terms[i][a]] = std::max<int64_t>(size[terms[i][a]], shapes[i][a]);
  }
  std::vector<char> labels;
  for (const auto& [c, n] : size) labels.push_back(c);
  out_shape.clear();
  for (char c : out) out_shape.push_back(size[c]);
  std::vector<double> result(static_cast<size_t>(shape_numel(out_shape)), 0.0);
  std::map<char, int64_t> at;
  for (char c : labels) at[c] = 0;
  int64_t total = 1;
  for (char c : labels) total *= size[c];
  for (int64_t flat = 0; flat < total; ++flat) {
    int64_t rest = flat;
    for (size_t l = labels.size(); l-- > 0;) {
      at[labels[l]] = rest % size[labels[l]];
      rest /= size[labels[l]];
    }
    double product = 1.0;
    for (size_t i = 0; i < terms.size(); ++i) {
      int64_t offset = 0;
      for (size_t a = 0; a < terms[i].size(); ++a) {
        const int64_t dim = shapes[i][a];
        offset = offset * dim + (dim == 1 ? 0 : at[terms[i][a]]);
      }
      product *= values[i][static_cast<size_t>(offset)];
    }
    int64_t o = 0;
    for (char c : out) o = o * size[c] + at[c];
    result[static_cast<size_t>(o)] += product;
  }
  return result;
}

void expect_matches_reference(const std::string& equation, const std::vector<Shape>& shapes, int threads,
                              uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> dist(-4, 4);
  std::vector<Tensor> inputs;
  std::vector<std::vector<double>> values;
  for (const Shape& shape : shapes) {
    std::vector<double> v(static_cast<size_t>(shape_numel(shape)));
    for (double& x : v) x = dist(rng);
    values.push_back(v);
    inputs.push_back(make_tensor<double>(shape, v));
  }
  Shape expected_shape;
  const std::vector<double> expected = reference(equation, shapes, values, expected_shape);
  const Tensor y = run_one(einsum_node(equation), inputs, threads);
  ASSERT_EQ(y.shape(), expected_shape) << equation;
  EXPECT_EQ(to_vector<double>(y), expected) << equation << " threads " << threads;
}

TEST(EinsumTest, MatchesNaiveReference) {
  const std::vector<std::pair<std::string, std::vector<Shape>>> cases = {
      {"ij,jk->ik", {{3, 4}, {4, 5}}},
      {"bij,bjk->bik", {{2, 3, 4}, {2, 4, 5}}},
      {"ij->ji", {{3, 5}}},
      {"ii->i", {{4, 4}}},
      {"ii->", {{4, 4}}},
      {"ij->", {{3, 4}}},
      {"i,i->", {{7}, {7}}},
      {"i,j->ij", {{3}, {4}}},
      {"bii->bi", {{2, 3, 3}}},
      {"ij,jk,kl->il", {{2, 3}, {3, 4}, {4, 5}}},
      {"ij,kl->", {{2, 3}, {4, 5}}},
      {"ijk,ikj->i", {{2, 3, 4}, {2, 4, 3}}},
      {"abc,cd->dba", {{2, 3, 4}, {4, 5}}},
      {"ij,ij->ij", {{3, 4}, {3, 4}}},
      {"ij,j->i", {{70, 65}, {65}}},
      {"bik,bjk->bij", {{3, 17, 33}, {3, 19, 33}}},
      {"iij,jk->ik", {{3, 3, 4}, {4, 2}}},
      {"ij,ik->jk", {{1, 4}, {5, 3}}},
      {"ij,jk->ijk", {{2, 3}, {3, 4}}},
  };
  uint32_t seed = 1;
  for (const auto& [equation, shapes] : cases) {
    for (int threads : {1, 3}) expect_matches_reference(equation, shapes, threads, seed++);
  }
}

TEST(EinsumTest, ImplicitOutputSortsSingleLabels) {
  // "ij,jk" -> "ik"; "ba" -> "ab" (transpose); "ii" -> "" (trace).
  const Tensor a = make_tensor<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  const Tensor b = make_tensor<float>({3, 2}, {1, 0, 0, 1, 1, 1});
  EXPECT_EQ(to_vector<float>(run_one(einsum_node("ij,jk"), {a, b})), (std::vector<float>{4, 5, 10, 11}));
  const Tensor t = run_one(einsum_node("ba"), {a});
  EXPECT_EQ(t.shape(), (Shape{3, 2}));
  EXPECT_EQ(to_vector<float>(t), (std::vector<float>{1, 4, 2, 5, 3, 6}));
  const Tensor sq = make_tensor<float>({2, 2}, {1, 2, 3, 4});
  const Tensor trace = run_one(einsum_node("ii"), {sq});
  EXPECT_EQ(trace.shape(), Shape{});
  EXPECT_EQ(to_vector<float>(trace), (std::vector<float>{5}));
  // Uppercase sorts before lowercase (ASCII).
  EXPECT_EQ(run_one(einsum_node("aB"), {a}).shape(), (Shape{3, 2}));
}

TEST(EinsumTest, EllipsisBroadcastsBatchDims) {
  // ...ij,...jk with batch dims [2,1] and [3]: output [2,3,i,k].
  std::vector<float> av(2 * 1 * 2 * 2), bv(3 * 2 * 2);
  for (size_t i = 0; i < av.size(); ++i) av[i] = static_cast<float>(i + 1);
  for (size_t i = 0; i < bv.size(); ++i) bv[i] = static_cast<float>(i % 3);
  const Tensor a = make_tensor<float>({2, 1, 2, 2}, av);
  const Tensor b = make_tensor<float>({3, 2, 2}, bv);
  for (int threads : {1, 3}) {
    const Tensor y = run_one(einsum_node("...ij,...jk->...ik"), {a, b}, threads);
    ASSERT_EQ(y.shape(), (Shape{2, 3, 2, 2}));
    const std::vector<float> out = to_vector<float>(y);
    for (int64_t p = 0; p < 2; ++p) {
      for (int64_t q = 0; q < 3; ++q) {
        for (int64_t i = 0; i < 2; ++i) {
          for (int64_t k = 0; k < 2; ++k) {
            float sum = 0;
            for (int64_t j = 0; j < 2; ++j) sum += av[p * 4 + i * 2 + j] * bv[q * 4 + j * 2 + k];
            EXPECT_EQ(out[((p * 3 + q) * 2 + i) * 2 + k], sum);
          }
        }
      }
    }
  }
  // Implicit output puts the ellipsis dims first; ellipsis may sit in the middle of a term.
  const Tensor x = make_tensor<float>({2, 3, 4}, std::vector<float>(24, 1.0f));
  EXPECT_EQ(run_one(einsum_node("i...j"), {x}).shape(), (Shape{3, 2, 4}));
  EXPECT_EQ(run_one(einsum_node("i...j->j"), {x}).shape(), (Shape{4}));
  EXPECT_EQ(to_vector<float>(run_one(einsum_node("i...j->j"), {x})), (std::vector<float>(4, 6.0f)));
  // An ellipsis over zero dims.
  EXPECT_EQ(run_one(einsum_node("...ij->...ji"), {make_tensor<float>({2, 3}, std::vector<float>(6, 0.f))}).shape(),
            (Shape{3, 2}));
}

TEST(EinsumTest, ScalarsAndEmptyDims) {
  const Tensor s = make_tensor<float>({}, {3.0f});
  const Tensor v = make_tensor<float>({3}, {1, 2, 3});
  EXPECT_EQ(to_vector<float>(run_one(einsum_node(",i->i"), {s, v})), (std::vector<float>{3, 6, 9}));
  EXPECT_EQ(to_vector<float>(run_one(einsum_node("->"), {s})), (std::vector<float>{3}));
  // A contraction over a zero-size label gives zeros; a zero-size output is empty.
  const Tensor a = make_tensor<float>({2, 0}, {});
  const Tensor b = make_tensor<float>({0, 3}, {});
  const Tensor y = run_one(einsum_node("ij,jk->ik"), {a, b});
  EXPECT_EQ(y.shape(), (Shape{2, 3}));
  EXPECT_EQ(to_vector<float>(y), std::vector<float>(6, 0.0f));
  EXPECT_EQ(run_one(einsum_node("ij,jk->ik"), {make_tensor<float>({0, 2}, {}), make_tensor<float>({2, 3}, {1, 1, 1, 1, 1, 1})})
                .shape(),
            (Shape{0, 3}));
}

TEST(EinsumTest, IntegerTypesWrap) {
  const Tensor a = make_tensor<int8_t>({2}, {100, 100});
  const Tensor b = make_tensor<int8_t>({2}, {2, 1});
  // 300 wraps to 44 in int8, as numpy computes it.
  EXPECT_EQ(to_vector<int8_t>(run_one(einsum_node("i,i->"), {a, b})), (std::vector<int8_t>{44}));
  const Tensor c = make_tensor<int64_t>({2, 2}, {INT64_MAX, 1, 1, 1});
  EXPECT_EQ(to_vector<int64_t>(run_one(einsum_node("ij->i"), {c})), (std::vector<int64_t>{INT64_MIN, 2}));
  const Tensor u = make_tensor<uint16_t>({2}, {65535, 65535});
  EXPECT_EQ(to_vector<uint16_t>(run_one(einsum_node("i,i->"), {u, u})), (std::vector<uint16_t>{2}));
  const Tensor i32 = make_tensor<int32_t>({2, 2}, {1, 2, 3, 4});
  EXPECT_EQ(to_vector<int32_t>(run_one(einsum_node("ij,jk->ik"), {i32, i32}, 3)), (std::vector<int32_t>{7, 10, 15, 22}));
}

TEST(EinsumTest, HalfTypesComputeInFloat) {
  const Tensor a = make_half_tensor<Float16>({2, 2}, {1, 2, 3, 4});
  const Tensor y = run_one(einsum_node("ij,jk->ik"), {a, a});
  EXPECT_EQ(y.dtype(), DataType::kFloat16);
  EXPECT_EQ(to_float_vector(y), (std::vector<float>{7, 10, 15, 22}));
  const Tensor b = make_half_tensor<BFloat16>({3}, {1, 2, 3});
  const Tensor z = run_one(einsum_node("i->", 28), {b});
  EXPECT_EQ(z.dtype(), DataType::kBFloat16);
  EXPECT_EQ(to_float_vector(z), (std::vector<float>{6}));
}

TEST(EinsumTest, NanPropagates) {
  const Tensor a = make_tensor<float>({2}, {NAN, 1.0f});
  const Tensor y = run_one(einsum_node("i,i->"), {a, make_tensor<float>({2}, {1, 1})});
  EXPECT_TRUE(std::isnan(to_vector<float>(y)[0]));
}

TEST(EinsumTest, RejectsBadEquationsAndShapes) {
  const Tensor a = make_tensor<float>({2, 3}, std::vector<float>(6, 1.0f));
  for (const std::string bad : {"ij->k", "ij->ii", "i.j->", "i$j", "..i...->"}) {
    auto result = run_kernel(einsum_node(bad), {a});
    ASSERT_FALSE(result.has_value()) << bad;
    EXPECT_EQ(result.status().code(), StatusCode::kInvalidGraph) << bad;
  }
  auto rank = run_kernel(einsum_node("ijk->i"), {a});
  ASSERT_FALSE(rank.has_value());
  EXPECT_EQ(rank.status().code(), StatusCode::kInvalidArgument);
  auto count = run_kernel(einsum_node("ij,jk->ik"), {a});
  EXPECT_FALSE(count.has_value());
  auto dims = run_kernel(einsum_node("ij,jk->ik"), {a, make_tensor<float>({4, 2}, std::vector<float>(8, 1.0f))});
  ASSERT_FALSE(dims.has_value());
  EXPECT_NE(dims.status().message().find("Einsum node 'n'"), std::string::npos) << dims.status().message();
  auto diag = run_kernel(einsum_node("ii->i"), {a});
  EXPECT_FALSE(diag.has_value());
  auto types = run_kernel(einsum_node("i,i->"), {make_tensor<float>({1}, {1}), make_tensor<double>({1}, {1})});
  EXPECT_FALSE(types.has_value());
}

TEST(EinsumTest, ContractionOrderAvoidsHugeIntermediates) {
  // Left to right, "ab,cd" would materialise [a,b,c,d] = 2^36 floats; the greedy order contracts "ab,bd" first.
  const Tensor x = make_tensor<float>({512, 512}, std::vector<float>(512 * 512, 1.0f));
  const Tensor y = run_one(einsum_node("ab,cd,bd->ac"), {x, x, x}, 3);
  ASSERT_EQ(y.shape(), (Shape{512, 512}));
  EXPECT_EQ(to_vector<float>(y)[777], 512.0f * 512.0f);
}

}  // namespace
}  // namespace nxrt::cpu::testing
