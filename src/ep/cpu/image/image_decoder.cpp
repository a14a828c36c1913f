// ImageDecoder (opset 20): encoded bytes -> uint8 [H, W, C] image. The format comes from the magic bytes;
// the per-format decoders live in image_codec_*.cpp. Every format is decoded to RGB first; BGR swaps the
// channels and Grayscale uses Pillow's fixed-point luma (L = (19595 R + 38470 G + 7471 B + 2^15) >> 16),
// the conversion that produced the ONNX reference outputs.
#include <algorithm>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "ep/cpu/image/image_codec.h"
#include "ep/cpu/kernel.h"

namespace nxrt::cpu {

namespace image {

namespace {

bool starts_with(Bytes data, std::string_view prefix) {
  return data.size() >= prefix.size() && std::memcmp(data.data(), prefix.data(), prefix.size()) == 0;
}

bool is_pnm(Bytes data) {
  if (data.size() < 3 || data[0] != 'P' || data[1] < '1' || data[1] > '6') return false;
  const uint8_t c = data[2];
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f' || c == '#';
}

}  // namespace

ImageFormat detect_format(Bytes data) {
  using namespace std::string_view_literals;
  if (starts_with(data, "\x89PNG\r\n\x1a\n"sv)) return ImageFormat::kPng;
  if (starts_with(data, "\xff\xd8\xff"sv)) return ImageFormat::kJpeg;
  if (starts_with(data, "\x00\x00\x00\x0cjP  \r\n\x87\n"sv) || starts_with(data, "\xff\x4f\xff\x51"sv)) {
    return ImageFormat::kJpeg2000;
  }
  if (starts_with(data, "II*\x00"sv) || starts_with(data, "MM\x00*"sv) || starts_with(data, "II+\x00"sv) ||
      starts_with(data, "MM\x00+"sv)) {
    return ImageFormat::kTiff;
  }
  if (data.size() >= 12 && starts_with(data, "RIFF"sv) && std::memcmp(data.data() + 8, "WEBP", 4) == 0) {
    return ImageFormat::kWebp;
  }
  if (starts_with(data, "BM"sv)) return ImageFormat::kBmp;
  if (is_pnm(data)) return ImageFormat::kPnm;
  return ImageFormat::kUnknown;
}

std::string_view format_name(ImageFormat format) {
  switch (format) {
    case ImageFormat::kBmp: return "BMP";
    case ImageFormat::kPnm: return "PNM";
    case ImageFormat::kPng: return "PNG";
    case ImageFormat::kJpeg: return "JPEG";
    case ImageFormat::kJpeg2000: return "JPEG 2000";
    case ImageFormat::kTiff: return "TIFF";
    case ImageFormat::kWebp: return "WebP";
    case ImageFormat::kUnknown: break;
  }
  return "unknown";
}

Status check_dimensions(std::string_view format, int64_t height, int64_t width) {
  if (height < 1 || width < 1 || height > kMaxSide || width > kMaxSide || height * width > kMaxPixels) {
    return make_error(StatusCode::kInvalidArgument, format, " image dimensions ", height, " x ",
                      width, " are empty or exceed the supported ", kMaxPixels, " pixels");
  }
  return Status::ok();
}

Expected<ImageSize> read_size(ImageFormat format, Bytes data) {
  switch (format) {
    case ImageFormat::kBmp: return bmp_size(data);
    case ImageFormat::kPnm: return pnm_size(data);
    case ImageFormat::kPng: return png_size(data);
    case ImageFormat::kJpeg: return jpeg_size(data);
    case ImageFormat::kJpeg2000: return jpeg2000_size(data);
    case ImageFormat::kTiff: return tiff_size(data);
    case ImageFormat::kWebp: return webp_size(data);
    case ImageFormat::kUnknown: break;
  }
  return make_error(StatusCode::kInvalidArgument,
                    "input is not a BMP, JPEG, JPEG 2000, PNG, PNM, TIFF or WebP image");
}

Status decode_rgb(ImageFormat format, Bytes data, ImageSize size, uint8_t* rgb) {
  switch (format) {
    case ImageFormat::kBmp: return bmp_decode(data, size, rgb);
    case ImageFormat::kPnm: return pnm_decode(data, size, rgb);
    case ImageFormat::kPng: return png_decode(data, size, rgb);
    case ImageFormat::kJpeg: return jpeg_decode(data, size, rgb);
    case ImageFormat::kJpeg2000: return jpeg2000_decode(data, size, rgb);
    case ImageFormat::kTiff: return tiff_decode(data, size, rgb);
    case ImageFormat::kWebp: return webp_decode(data, size, rgb);
    case ImageFormat::kUnknown: break;
  }
  return read_size(format, data).status();
}

}  // namespace image

namespace {

enum class PixelFormat { kRgb, kBgr, kGrayscale };

class ImageDecoderKernel final : public Kernel {
 public:
  ImageDecoderKernel(std::string description, PixelFormat pixel_format)
      : description_(std::move(description)), pixel_format_(pixel_format) {}

  Status reshape(KernelInputs inputs, std::vector<OutputDesc>& outputs) const override {
    TRY_ASSIGN(const image::Bytes data, encoded(inputs));
    Expected<image::ImageSize> read = image::read_size(image::detect_format(data), data);
    if (!read.has_value()) return with_context(read.status());
    const image::ImageSize size = *read;
    const int64_t channels = pixel_format_ == PixelFormat::kGrayscale ? 1 : 3;
    outputs.assign(1, OutputDesc{DataType::kUInt8, Shape{size.height, size.width, channels}});
    return Status::ok();
  }

  Status run(KernelInputs inputs, std::span<Tensor> outputs, ThreadPool& pool) const override {
    TRY_ASSIGN(const image::Bytes data, encoded(inputs));
    Tensor& output = outputs[0];
    const image::ImageSize size{output.shape()[0], output.shape()[1]};
    const image::ImageFormat format = image::detect_format(data);
    uint8_t* out = output.data<uint8_t>();
    const int64_t pixels = size.height * size.width;
    if (pixel_format_ != PixelFormat::kGrayscale) {
      TRY(with_context(image::decode_rgb(format, data, size, out)));
      if (pixel_format_ == PixelFormat::kBgr) {
        for (int64_t i = 0; i < pixels; ++i) std::swap(out[3 * i], out[3 * i + 2]);
      }
      return Status::ok();
    }
    std::vector<uint8_t> rgb(static_cast<size_t>(size.rgb_bytes()));
    TRY(with_context(image::decode_rgb(format, data, size, rgb.data())));
    for (int64_t i = 0; i < pixels; ++i) {
      const uint32_t luma = uint32_t{rgb[3 * i]} * 19595 + uint32_t{rgb[3 * i + 1]} * 38470 +
                            uint32_t{rgb[3 * i + 2]} * 7471 + 0x8000;
      out[i] = static_cast<uint8_t>(luma >> 16);
    }
    return Status::ok();
  }

 private:
  Expected<image::Bytes> encoded(KernelInputs inputs) const {
    const Tensor* x = inputs.empty() ? nullptr : inputs[0];
    if (x == nullptr) return make_error(StatusCode::kInvalidArgument, description_, ": missing input 0 (encoded_stream)");
    if (x->dtype() != DataType::kUInt8 || x->rank() != 1) {
      return make_error(StatusCode::kInvalidArgument, description_,
                        ": input 0 (encoded_stream) must be a 1-D uint8 tensor, got rank ", x->rank(), " ",
                        data_type_name(x->dtype()));
    }
    return image::Bytes(x->data<uint8_t>(), static_cast<size_t>(x->numel()));
  }
  Status with_context(Status status) const {
    if (status.is_ok()) return status;
    return status.with_context(description_ + ": ");
  }

  std::string description_;
  PixelFormat pixel_format_;
};

Expected<std::unique_ptr<Kernel>> create_image_decoder(const KernelInfo& info) {
  TRY_ASSIGN(const std::string name, info.node.attr_string("pixel_format", "RGB"));
  PixelFormat pixel_format = PixelFormat::kRgb;
  if (name == "BGR") {
    pixel_format = PixelFormat::kBgr;
  } else if (name == "Grayscale") {
    pixel_format = PixelFormat::kGrayscale;
  } else if (name != "RGB") {
    return make_error(StatusCode::kInvalidGraph, info.node.describe(), ": attribute pixel_format '", name,
                      "' is not RGB, BGR or Grayscale");
  }
  return std::unique_ptr<Kernel>(std::make_unique<ImageDecoderKernel>(info.node.describe(), pixel_format));
}

const KernelDef kImageDecoderKernels[] = {
    {"ImageDecoder", graph::kOnnxDomain, 20, kLatestOpset, type_mask(TypeList<uint8_t>{}), 0, create_image_decoder},
};

}  // namespace

std::span<const KernelDef> image_decoder_kernels() { return kImageDecoderKernels; }

}  // namespace nxrt::cpu
