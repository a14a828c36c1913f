#include <cstdint>
#include <string>
#include <vector>

#include "ep/cpu/kernel_test_util.h"

namespace nxrt::cpu::testing {
namespace {

using Buffer = std::vector<uint8_t>;

struct Rgb {
  uint8_t r, g, b;
};

// A height x width picture whose pixels all differ, rows top to bottom.
std::vector<Rgb> picture(int64_t height, int64_t width) {
  std::vector<Rgb> pixels;
  for (int64_t y = 0; y < height; ++y) {
    for (int64_t x = 0; x < width; ++x) {
      pixels.push_back({static_cast<uint8_t>(40 * x + 7), static_cast<uint8_t>(90 * y + 3),
                        static_cast<uint8_t>((x * 31 + y * 57) % 256)});
    }
  }
  return pixels;
}

void put_u16le(Buffer& b, uint32_t v) {
  b.push_back(static_cast<uint8_t>(v));
  b.push_back(static_cast<uint8_t>(v >> 8));
}
void put_u32le(Buffer& b, uint32_t v) {
  put_u16le(b, v & 0xFFFF);
  put_u16le(b, v >> 16);
}
void put_u32be(Buffer& b, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) b.push_back(static_cast<uint8_t>(v >> shift));
}
void put_text(Buffer& b, const std::string& text) { b.insert(b.end(), text.begin(), text.end()); }

// Uncompressed 24- or 32-bit BMP with a 40-byte info header; bottom-up unless top_down.
Buffer make_bmp(const std::vector<Rgb>& pixels, int64_t height, int64_t width, int bits, bool top_down) {
  const int64_t stride = (width * bits + 31) / 32 * 4;
  Buffer b;
  put_text(b, "BM");
  put_u32le(b, static_cast<uint32_t>(54 + stride * height));
  put_u32le(b, 0);
  put_u32le(b, 54);
  put_u32le(b, 40);
  put_u32le(b, static_cast<uint32_t>(width));
  put_u32le(b, static_cast<uint32_t>(top_down ? -height : height));
  put_u16le(b, 1);
  put_u16le(b, static_cast<uint32_t>(bits));
  for (int i = 0; i < 6; ++i) put_u32le(b, 0);
  for (int64_t row = 0; row < height; ++row) {
    const int64_t y = top_down ? row : height - 1 - row;
    const size_t start = b.size();
    for (int64_t x = 0; x < width; ++x) {
      const Rgb& p = pixels[static_cast<size_t>(y * width + x)];
      b.insert(b.end(), {p.b, p.g, p.r});
      if (bits == 32) b.push_back(255);
    }
    while (static_cast<int64_t>(b.size() - start) < stride) b.push_back(0);
  }
  return b;
}

uint32_t crc32(const uint8_t* data, size_t n) {
  uint32_t crc = 0xFFFFFFFFu;
  for (size_t i = 0; i < n; ++i) {
    crc ^= data[i];
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
  }
  return ~crc;
}

void put_png_chunk(Buffer& b, const char* type, const Buffer& payload) {
  put_u32be(b, static_cast<uint32_t>(payload.size()));
  const size_t start = b.size();
  put_text(b, type);
  b.insert(b.end(), payload.begin(), payload.end());
  put_u32be(b, crc32(b.data() + start, b.size() - start));
}

// 8-bit RGB PNG whose zlib stream holds one stored (uncompressed) deflate block.
Buffer make_png(const std::vector<Rgb>& pixels, int64_t height, int64_t width) {
  Buffer raw;
  for (int64_t y = 0; y < height; ++y) {
    raw.push_back(0);  // filter: none
    for (int64_t x = 0; x < width; ++x) {
      const Rgb& p = pixels[static_cast<size_t>(y * width + x)];
      raw.insert(raw.end(), {p.r, p.g, p.b});
    }
  }
  Buffer zlib = {0x78, 0x01, 0x01};
  put_u16le(zlib, static_cast<uint32_t>(raw.size()));
  put_u16le(zlib, static_cast<uint32_t>(~raw.size() & 0xFFFF));
  zlib.insert(zlib.end(), raw.begin(), raw.end());
  uint32_t a = 1, s = 0;
  for (uint8_t v : raw) {
    a = (a + v) % 65521;
    s = (s + a) % 65521;
  }
  put_u32be(zlib, (s << 16) | a);

  Buffer b = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
  Buffer header;
  put_u32be(header, static_cast<uint32_t>(width));
  put_u32be(header, static_cast<uint32_t>(height));
  header.insert(header.end(), {8, 2, 0, 0, 0});
  put_png_chunk(b, "IHDR", header);
  put_png_chunk(b, "IDAT", zlib);
  put_png_chunk(b, "IEND", {});
  return b;
}

Expected<std::vector<Tensor>> decode(const Buffer& bytes, const std::string& pixel_format = "RGB") {
  NodeBuilder node("ImageDecoder", 20);
  node.attr_string("pixel_format", pixel_format);
  return run_kernel(node.node(), {make_tensor<uint8_t>({static_cast<int64_t>(bytes.size())}, bytes)});
}

Buffer expected_rgb(const std::vector<Rgb>& pixels) {
  Buffer out;
  for (const Rgb& p : pixels) out.insert(out.end(), {p.r, p.g, p.b});
  return out;
}

void expect_decodes_to(const Buffer& bytes, const std::vector<Rgb>& pixels, int64_t height, int64_t width) {
  auto rgb = decode(bytes);
  ASSERT_TRUE(rgb.has_value()) << rgb.status().to_string();
  EXPECT_EQ((*rgb)[0].shape(), (Shape{height, width, 3}));
  EXPECT_EQ(to_vector<uint8_t>((*rgb)[0]), expected_rgb(pixels));

  auto bgr = decode(bytes, "BGR");
  ASSERT_TRUE(bgr.has_value()) << bgr.status().to_string();
  Buffer swapped;
  for (const Rgb& p : pixels) swapped.insert(swapped.end(), {p.b, p.g, p.r});
  EXPECT_EQ(to_vector<uint8_t>((*bgr)[0]), swapped);

  auto grey = decode(bytes, "Grayscale");
  ASSERT_TRUE(grey.has_value()) << grey.status().to_string();
  EXPECT_EQ((*grey)[0].shape(), (Shape{height, width, 1}));
  Buffer luma;
  for (const Rgb& p : pixels) luma.push_back(static_cast<uint8_t>((p.r * 19595 + p.g * 38470 + p.b * 7471 + 0x8000) >> 16));
  EXPECT_EQ(to_vector<uint8_t>((*grey)[0]), luma);
}

void expect_invalid(const Buffer& bytes, const std::string& mentions) {
  auto result = decode(bytes);
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.status().code(), StatusCode::kInvalidArgument) << result.status().to_string();
  EXPECT_NE(result.status().message().find(mentions), std::string::npos) << result.status().message();
}

// Every prefix of a valid image either decodes or fails cleanly (run under ASan to catch overreads).
void expect_prefixes_safe(const Buffer& bytes) {
  for (size_t n = 0; n < bytes.size(); ++n) {
    auto result = decode(Buffer(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(n)));
    if (result.has_value()) {
      EXPECT_EQ((*result)[0].rank(), 3u);
    } else {
      EXPECT_NE(result.status().code(), StatusCode::kOk);
    }
  }
}

TEST(ImageDecoderTest, BmpRoundTrips) {
  const auto pixels = picture(3, 5);  // 5 * 3 bytes per row needs row padding
  expect_decodes_to(make_bmp(pixels, 3, 5, 24, false), pixels, 3, 5);
  expect_decodes_to(make_bmp(pixels, 3, 5, 24, true), pixels, 3, 5);
  expect_decodes_to(make_bmp(pixels, 3, 5, 32, false), pixels, 3, 5);
}

TEST(ImageDecoderTest, BmpPalette) {
  Buffer b;
  put_text(b, "BM");
  put_u32le(b, 0);
  put_u32le(b, 0);
  put_u32le(b, 54 + 8);
  put_u32le(b, 40);
  put_u32le(b, 3);
  put_u32le(b, 1);
  put_u16le(b, 1);
  put_u16le(b, 1);
  put_u32le(b, 0);
  for (int i = 0; i < 5; ++i) put_u32le(b, 0);
  b.insert(b.end(), {10, 20, 30, 0, 200, 150, 100, 0});  // palette entries are B, G, R, reserved
  b.insert(b.end(), {0xA0, 0, 0, 0});                    // bits 1 0 1
  expect_decodes_to(b, {{100, 150, 200}, {30, 20, 10}, {100, 150, 200}}, 1, 3);
}

TEST(ImageDecoderTest, PnmRoundTrips) {
  const auto pixels = picture(3, 4);
  Buffer p6;
  put_text(p6, "P6\n# a comment\n4 3\n255\n");
  for (const Rgb& p : pixels) p6.insert(p6.end(), {p.r, p.g, p.b});
  expect_decodes_to(p6, pixels, 3, 4);

  Buffer p3;
  put_text(p3, "P3 4 3 255\n");
  for (const Rgb& p : pixels) put_text(p3, std::to_string(p.r) + " " + std::to_string(p.g) + " " + std::to_string(p.b) + "\n");
  expect_decodes_to(p3, pixels, 3, 4);

  // 16-bit samples: max 65535 scales back to the original bytes.
  Buffer p6_wide;
  put_text(p6_wide, "P6 4 3 65535\n");
  for (const Rgb& p : pixels) {
    for (uint8_t v : {p.r, p.g, p.b}) p6_wide.insert(p6_wide.end(), {v, v});
  }
  expect_decodes_to(p6_wide, pixels, 3, 4);
}

TEST(ImageDecoderTest, PnmGreyAndBitmap) {
  Buffer p5;
  put_text(p5, "P5 3 1 15\n");
  p5.insert(p5.end(), {0, 5, 15});
  expect_decodes_to(p5, {{0, 0, 0}, {85, 85, 85}, {255, 255, 255}}, 1, 3);

  Buffer p2;
  put_text(p2, "P2\n3 1\n255\n0 128 255\n");
  expect_decodes_to(p2, {{0, 0, 0}, {128, 128, 128}, {255, 255, 255}}, 1, 3);

  Buffer p1;
  put_text(p1, "P1\n3 1\n101\n");
  expect_decodes_to(p1, {{0, 0, 0}, {255, 255, 255}, {0, 0, 0}}, 1, 3);

  Buffer p4;
  put_text(p4, "P4\n3 1\n");
  p4.push_back(0x40);
  expect_decodes_to(p4, {{255, 255, 255}, {0, 0, 0}, {255, 255, 255}}, 1, 3);
}

TEST(ImageDecoderTest, RejectsCorruptBmp) {
  const auto pixels = picture(3, 5);
  Buffer bmp = make_bmp(pixels, 3, 5, 24, false);
  expect_invalid(Buffer(bmp.begin(), bmp.end() - 1), "BMP");
  expect_invalid(Buffer(bmp.begin(), bmp.begin() + 20), "BMP");
  Buffer huge = bmp;
  huge[18] = huge[19] = huge[20] = 0xFF;  // width 16 million
  huge[21] = 0;
  expect_invalid(huge, "BMP");
  Buffer bad_depth = bmp;
  bad_depth[28] = 7;
  expect_invalid(bad_depth, "BMP");
  Buffer rle = bmp;
  rle[30] = 1;
  expect_invalid(rle, "BMP");
  expect_prefixes_safe(bmp);
}

TEST(ImageDecoderTest, RejectsCorruptPnm) {
  Buffer p6;
  put_text(p6, "P6 2 2 255\n");
  p6.insert(p6.end(), 11, 7);
  expect_invalid(p6, "PNM");
  Buffer p5;
  put_text(p5, "P5 1 1 10\n");
  p5.push_back(11);
  expect_invalid(p5, "PNM");
  Buffer no_width;
  put_text(no_width, "P6 x 2 255\n");
  expect_invalid(no_width, "PNM");
  Buffer zero;
  put_text(zero, "P5 0 2 255\n");
  expect_invalid(zero, "PNM");
  Buffer p3;
  put_text(p3, "P3 2 1 255 1 2 3 4 5\n");
  expect_invalid(p3, "PNM");
  p6.push_back(7);
  expect_prefixes_safe(p6);
}

TEST(ImageDecoderTest, RejectsUnknownInputs) {
  expect_invalid({}, "not a BMP");
  expect_invalid({'G', 'I', 'F', '8', '9', 'a'}, "not a BMP");

  NodeBuilder node("ImageDecoder", 20);
  node.attr_string("pixel_format", "RGBA");
  auto bad_attr = run_kernel(node.node(), {make_tensor<uint8_t>({1}, {0})});
  ASSERT_FALSE(bad_attr.has_value());
  EXPECT_EQ(bad_attr.status().code(), StatusCode::kInvalidGraph);

  NodeBuilder plain("ImageDecoder", 20);
  auto two_d = run_kernel(plain.node(), {make_tensor<uint8_t>({1, 2}, {'B', 'M'})});
  ASSERT_FALSE(two_d.has_value());
  EXPECT_EQ(two_d.status().code(), StatusCode::kInvalidArgument);
}

TEST(ImageDecoderTest, PngWhenLibpngIsPresent) {
  const auto pixels = picture(3, 4);
  const Buffer png = make_png(pixels, 3, 4);
  auto result = decode(png);
  if (!result.has_value() && result.status().code() == StatusCode::kNotImplemented) {
    EXPECT_NE(result.status().message().find("libpng"), std::string::npos);
    GTEST_SKIP() << "built without libpng";
  }
  expect_decodes_to(png, pixels, 3, 4);
  expect_invalid(Buffer(png.begin(), png.end() - 20), "PNG");
  Buffer bad_crc = png;
  bad_crc[40] ^= 0xFF;
  expect_invalid(bad_crc, "PNG");
  expect_prefixes_safe(png);
}

TEST(ImageDecoderTest, TruncatedJpegIsRejected) {
  const Buffer jpeg = {0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10, 'J', 'F', 'I', 'F', 0};
  auto result = decode(jpeg);
  ASSERT_FALSE(result.has_value());
  if (result.status().code() == StatusCode::kNotImplemented) GTEST_SKIP() << "built without libjpeg";
  EXPECT_EQ(result.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(result.status().message().find("JPEG"), std::string::npos);
}

}  // namespace
}  // namespace nxrt::cpu::testing
