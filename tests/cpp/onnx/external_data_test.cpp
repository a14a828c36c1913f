// map_model_file, model_bytes_from_buffer and load_external_data against real temporary directories.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "onnx/model_proto.h"
#include "onnx/model_writer.h"
#include "onnx/onnx_test_models.h"

namespace nxrt::onnx {
namespace {

namespace fs = std::filesystem;

class ExternalDataTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("nxrt_onnx_test_" + std::to_string(::getpid()) + "_" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    model_dir_ = root_ / "model";
    fs::create_directories(model_dir_ / "sub");
    data_.resize(10000);
    for (size_t i = 0; i < data_.size(); ++i) data_[i] = static_cast<char>(i * 7);
    write_file(model_dir_ / "weights.bin", data_);
    write_file(model_dir_ / "sub" / "w2.bin", "0123456789abcdef");
    write_file(root_ / "secret.bin", std::string(64, 's'));
  }
  void TearDown() override { fs::remove_all(root_); }

  static void write_file(const fs::path& path, const std::string& bytes) {
    std::ofstream out(path, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }

  // A float tensor of `count` elements stored externally with the given entries.
  static TensorProto external(std::vector<StringStringEntry> entries, int64_t count) {
    TensorProto tensor;
    tensor.name = "W";
    tensor.data_type = 1;
    tensor.dims = {count};
    tensor.data_location = 1;
    tensor.external_data = std::move(entries);
    return tensor;
  }

  void expect_refused(const TensorProto& tensor, StatusCode code, std::string_view needle) {
    auto loaded = load_external_data(tensor, model_dir_.string());
    ASSERT_FALSE(loaded.has_value()) << "external data was accepted";
    EXPECT_EQ(loaded.status().code(), code) << loaded.status().to_string();
    EXPECT_NE(loaded.status().message().find(needle), std::string::npos) << loaded.status().message();
  }

  fs::path root_;
  fs::path model_dir_;
  std::string data_;
};

TEST_F(ExternalDataTest, LoadsAnUnalignedRangeAndKeepsItAlive) {
  const TensorProto tensor =
      external({{"location", "weights.bin"}, {"offset", "4100"}, {"length", "400"}, {"checksum", "ignored"}}, 100);
  ExternalData loaded;
  {
    auto result = load_external_data(tensor, model_dir_.string());
    ASSERT_TRUE(result.has_value()) << result.status().to_string();
    loaded = std::move(result).value();
  }
  ASSERT_EQ(loaded.bytes.size(), 400u);
  EXPECT_TRUE(loaded.keep_alive);
  EXPECT_EQ(std::memcmp(loaded.bytes.data(), data_.data() + 4100, 400), 0);
}

TEST_F(ExternalDataTest, LengthDefaultsToTheRestOfTheFileAndSubdirectoriesWork) {
  const auto loaded = load_external_data(external({{"location", "sub/w2.bin"}, {"offset", "8"}}, 2),
                                         model_dir_.string());
  ASSERT_TRUE(loaded.has_value()) << loaded.status().to_string();
  EXPECT_EQ(loaded->bytes, "89abcdef");
}

TEST_F(ExternalDataTest, RawDataIsReturnedInPlace) {
  const std::string raw(8, 'r');
  TensorProto tensor;
  tensor.data_type = 1;
  tensor.dims = {2};
  tensor.raw_data = raw;
  tensor.has_raw_data = true;
  const auto loaded = load_external_data(tensor, "");
  ASSERT_TRUE(loaded.has_value());
  EXPECT_EQ(loaded->bytes.data(), raw.data());
}

TEST_F(ExternalDataTest, RefusesAbsolutePaths) {
  const std::string absolute = (model_dir_ / "weights.bin").string();
  expect_refused(external({{"location", absolute}}, 2500), StatusCode::kInvalidArgument, "absolute");
}

TEST_F(ExternalDataTest, RefusesDotDotComponents) {
  expect_refused(external({{"location", "../secret.bin"}}, 16), StatusCode::kInvalidArgument, "..");
  expect_refused(external({{"location", "sub/../../secret.bin"}}, 16), StatusCode::kInvalidArgument, "..");
  expect_refused(external({{"location", "sub/../weights.bin"}}, 2500), StatusCode::kInvalidArgument, "..");
}

TEST_F(ExternalDataTest, RefusesSymlinksLeavingTheDirectory) {
  fs::create_symlink(root_ / "secret.bin", model_dir_ / "link.bin");
  expect_refused(external({{"location", "link.bin"}}, 16), StatusCode::kInvalidArgument, "outside the model");
  fs::create_directory_symlink(root_, model_dir_ / "up");
  expect_refused(external({{"location", "up/secret.bin"}}, 16), StatusCode::kInvalidArgument, "outside the model");
  fs::create_symlink(model_dir_ / "weights.bin", model_dir_ / "inside.bin");
  EXPECT_TRUE(load_external_data(external({{"location", "inside.bin"}}, 2500), model_dir_.string()).has_value());
}

TEST_F(ExternalDataTest, RefusesRangesOutOfBounds) {
  expect_refused(external({{"location", "weights.bin"}, {"offset", "10001"}}, 0), StatusCode::kInvalidArgument,
                 "past the end");
  expect_refused(external({{"location", "weights.bin"}, {"offset", "9000"}, {"length", "1004"}}, 251),
                 StatusCode::kInvalidArgument, "exceeds");
  expect_refused(external({{"location", "weights.bin"}, {"offset", "8"}, {"length", "18446744073709551615"}}, 1),
                 StatusCode::kInvalidArgument, "exceeds");
  expect_refused(external({{"location", "weights.bin"}, {"length", "12"}}, 2), StatusCode::kInvalidArgument,
                 "does not match");
}

TEST_F(ExternalDataTest, RefusesMalformedEntries) {
  expect_refused(external({{"offset", "0"}}, 1), StatusCode::kInvalidArgument, "no 'location'");
  expect_refused(external({{"location", "weights.bin"}, {"offset", "-4"}}, 1), StatusCode::kInvalidArgument,
                 "offset '-4'");
  expect_refused(external({{"location", "weights.bin"}, {"length", "12x"}}, 3), StatusCode::kInvalidArgument,
                 "length '12x'");
  expect_refused(external({{"location", "weights.bin"}, {"offset", "99999999999999999999999"}}, 1),
                 StatusCode::kInvalidArgument, "offset");
  expect_refused(external({{"location", "weights.bin"}, {"color", "red"}}, 1), StatusCode::kInvalidArgument,
                 "unknown external data key 'color'");
  expect_refused(external({{"location", "missing.bin"}}, 1), StatusCode::kNoSuchFile, "missing.bin");
  expect_refused(external({{"location", "sub"}}, 1), StatusCode::kNoSuchFile, "not a regular file");
}

TEST_F(ExternalDataTest, InMemoryModelsCannotUseExternalData) {
  auto loaded = load_external_data(external({{"location", "weights.bin"}}, 2500), "");
  ASSERT_FALSE(loaded.has_value());
  EXPECT_EQ(loaded.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(loaded.status().message().find("from memory"), std::string::npos) << loaded.status().message();
}

TEST_F(ExternalDataTest, MapModelFileParsesInPlaceAndReportsItsDirectory) {
  const std::string bytes = write::encode_model(testing::sample_model());
  const fs::path path = model_dir_ / "model.onnx";
  write_file(path, bytes);
  auto mapped = map_model_file(path.string());
  ASSERT_TRUE(mapped.has_value()) << mapped.status().to_string();
  const std::shared_ptr<const ModelBytes> model_bytes = *mapped;
  EXPECT_EQ(model_bytes->bytes(), bytes);
  EXPECT_EQ(model_bytes->directory(), model_dir_.string());
  auto parsed = parse_model(model_bytes->bytes());
  ASSERT_TRUE(parsed.has_value());
  const std::string_view raw = parsed->graph->initializer.at(0).raw_data;
  EXPECT_GE(raw.data(), model_bytes->bytes().data());
  EXPECT_LE(raw.data() + raw.size(), model_bytes->bytes().data() + model_bytes->bytes().size());
}

TEST_F(ExternalDataTest, MapModelFileErrors) {
  const std::string missing = (model_dir_ / "nope.onnx").string();
  auto result = map_model_file(missing);
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.status().code(), StatusCode::kNoSuchFile);
  EXPECT_EQ(result.status().message(), "Load model from " + missing + " failed: No such file or directory");
  EXPECT_EQ(map_model_file(model_dir_.string()).status().code(), StatusCode::kNoSuchFile);

  const fs::path empty = model_dir_ / "empty.onnx";
  write_file(empty, "");
  auto empty_bytes = map_model_file(empty.string());
  ASSERT_TRUE(empty_bytes.has_value());
  EXPECT_TRUE((*empty_bytes)->bytes().empty());
}

TEST(ModelBytesFromBuffer, CopiesTheCallersBuffer) {
  std::string buffer = "model bytes";
  const auto bytes = model_bytes_from_buffer(buffer, "/some/dir");
  buffer.assign(buffer.size(), 'x');
  EXPECT_EQ(bytes->bytes(), "model bytes");
  EXPECT_EQ(bytes->directory(), "/some/dir");
  EXPECT_EQ(model_bytes_from_buffer("abc")->directory(), "");
}

TEST(ModelBytesFromBuffer, ExternalTensorInAParsedModelResolvesUnderTheGivenDirectory) {
  const fs::path dir = fs::temp_directory_path() / ("nxrt_onnx_buffer_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  {
    std::ofstream out(dir / "w.bin", std::ios::binary);
    const float values[2] = {1.5f, -2.0f};
    out.write(reinterpret_cast<const char*>(values), sizeof(values));
  }
  write::Model model;
  model.graph.initializers.push_back({"W", 1, {2}, "", {{"location", "w.bin"}}});
  const auto bytes = model_bytes_from_buffer(write::encode_model(model), dir.string());
  auto parsed = parse_model(bytes->bytes());
  ASSERT_TRUE(parsed.has_value());
  auto loaded = load_external_data(parsed->graph->initializer.at(0), bytes->directory());
  ASSERT_TRUE(loaded.has_value()) << loaded.status().to_string();
  float values[2];
  ASSERT_EQ(loaded->bytes.size(), sizeof(values));
  std::memcpy(values, loaded->bytes.data(), sizeof(values));
  EXPECT_EQ(values[1], -2.0f);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace nxrt::onnx
