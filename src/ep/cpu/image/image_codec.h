// Per-format image decoders behind the ImageDecoder kernel (image_decoder.cpp).
// Every decoder reads an encoded byte buffer and yields 8-bit interleaved RGB, rows top to bottom: grey
// sources replicate their value, alpha is dropped, wider samples keep their high byte. Corrupt or truncated
// input is an INVALID_ARGUMENT naming the format; a format whose library was not found at build time is
// NOT_IMPLEMENTED naming the package to install.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "core/status.h"

namespace nxrt::cpu::image {

enum class ImageFormat { kUnknown, kBmp, kPnm, kPng, kJpeg, kJpeg2000, kTiff, kWebp };

// Decoded images larger than this are refused before anything is allocated.
inline constexpr int64_t kMaxPixels = int64_t{1} << 28;
inline constexpr int64_t kMaxSide = int64_t{1} << 20;

struct ImageSize {
  int64_t height = 0;
  int64_t width = 0;
  int64_t rgb_bytes() const { return height * width * 3; }
};

using Bytes = std::span<const uint8_t>;

// From the leading magic bytes; kUnknown when none matches.
ImageFormat detect_format(Bytes data);
std::string_view format_name(ImageFormat format);

// Checks 1 <= side <= kMaxSide and the pixel count against kMaxPixels.
Status check_dimensions(std::string_view format, int64_t height, int64_t width);

// Reads only as much as the dimensions need.
Expected<ImageSize> read_size(ImageFormat format, Bytes data);
// `rgb` holds size.rgb_bytes(); fails when the stream's dimensions differ from `size`.
Status decode_rgb(ImageFormat format, Bytes data, ImageSize size, uint8_t* rgb);

Expected<ImageSize> bmp_size(Bytes data);
Status bmp_decode(Bytes data, ImageSize size, uint8_t* rgb);
Expected<ImageSize> pnm_size(Bytes data);
Status pnm_decode(Bytes data, ImageSize size, uint8_t* rgb);
Expected<ImageSize> png_size(Bytes data);
Status png_decode(Bytes data, ImageSize size, uint8_t* rgb);
Expected<ImageSize> jpeg_size(Bytes data);
Status jpeg_decode(Bytes data, ImageSize size, uint8_t* rgb);
Expected<ImageSize> tiff_size(Bytes data);
Status tiff_decode(Bytes data, ImageSize size, uint8_t* rgb);
Expected<ImageSize> webp_size(Bytes data);
Status webp_decode(Bytes data, ImageSize size, uint8_t* rgb);
Expected<ImageSize> jpeg2000_size(Bytes data);
Status jpeg2000_decode(Bytes data, ImageSize size, uint8_t* rgb);

}  // namespace nxrt::cpu::image
