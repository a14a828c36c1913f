// TIFF (libtiff), WebP (libwebp) and JPEG 2000 (OpenJPEG) decoders. Each library is optional: the build
// defines NXRT_HAVE_LIBTIFF / NXRT_HAVE_LIBWEBP / NXRT_HAVE_OPENJPEG when cmake/image_codecs.cmake finds it.
#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "ep/cpu/image/image_codec.h"

#ifdef NXRT_HAVE_LIBTIFF
#include <tiffio.h>
#endif
#ifdef NXRT_HAVE_LIBWEBP
#include <webp/decode.h>
#endif
#ifdef NXRT_HAVE_OPENJPEG
#include <openjpeg.h>
#endif

namespace nxrt::cpu::image {

namespace {

[[maybe_unused]] Status missing_library(std::string_view format, std::string_view library, std::string_view package) {
  return make_error(StatusCode::kNotImplemented, "", format, " support was not built; install ",
                    library, " (Debian: ", package, ") and rebuild");
}

[[maybe_unused]] Status corrupt(std::string_view format, std::string_view problem) {
  return make_error(StatusCode::kInvalidArgument, "corrupt ", format, " image: ", problem);
}

// A read-only in-memory stream for libraries that pull bytes through callbacks.
struct MemoryStream {
  explicit MemoryStream(Bytes bytes) : data(bytes) {}
  Bytes data;
  uint64_t position = 0;
  std::string error;  // the library's last error message
};

}  // namespace

#ifdef NXRT_HAVE_LIBTIFF

namespace {

tmsize_t tiff_read(thandle_t handle, void* buffer, tmsize_t count) {
  auto* stream = static_cast<MemoryStream*>(handle);
  if (count < 0 || stream->position >= stream->data.size()) return 0;
  const uint64_t n = std::min<uint64_t>(static_cast<uint64_t>(count), stream->data.size() - stream->position);
  std::memcpy(buffer, stream->data.data() + stream->position, n);
  stream->position += n;
  return static_cast<tmsize_t>(n);
}
tmsize_t tiff_write(thandle_t, void*, tmsize_t) { return 0; }
toff_t tiff_seek(thandle_t handle, toff_t offset, int whence) {
  auto* stream = static_cast<MemoryStream*>(handle);
  uint64_t base = 0;
  if (whence == SEEK_CUR) base = stream->position;
  if (whence == SEEK_END) base = stream->data.size();
  stream->position = base + offset;
  return stream->position;
}
int tiff_close(thandle_t) { return 0; }
toff_t tiff_size(thandle_t handle) { return static_cast<MemoryStream*>(handle)->data.size(); }
int tiff_map(thandle_t, void**, toff_t*) { return 0; }
void tiff_unmap(thandle_t, void*, toff_t) {}

#if TIFFLIB_VERSION >= 20221213
int tiff_error(TIFF*, void* user_data, const char* module, const char* format, va_list args) {
  char message[512];
  std::vsnprintf(message, sizeof(message), format, args);
  static_cast<MemoryStream*>(user_data)->error = message;
  return 1;
}
int tiff_warning(TIFF*, void*, const char*, const char*, va_list) { return 1; }
#endif

struct TiffCloser {
  void operator()(TIFF* tif) const { TIFFClose(tif); }
};

Expected<std::unique_ptr<TIFF, TiffCloser>> open_tiff(MemoryStream& stream, ImageSize& size) {
#if TIFFLIB_VERSION >= 20221213
  TIFFOpenOptions* options = TIFFOpenOptionsAlloc();
  TIFFOpenOptionsSetErrorHandlerExtR(options, tiff_error, &stream);
  TIFFOpenOptionsSetWarningHandlerExtR(options, tiff_warning, &stream);
  TIFF* raw = TIFFClientOpenExt("memory", "rm", &stream, tiff_read, tiff_write, tiff_seek, tiff_close, tiff_size,
                                tiff_map, tiff_unmap, options);
  TIFFOpenOptionsFree(options);
#else
  TIFF* raw = TIFFClientOpen("memory", "rm", &stream, tiff_read, tiff_write, tiff_seek, tiff_close, tiff_size,
                             tiff_map, tiff_unmap);
#endif
  if (raw == nullptr) return corrupt("TIFF", stream.error.empty() ? "cannot read the header" : stream.error);
  std::unique_ptr<TIFF, TiffCloser> tif(raw);
  uint32_t width = 0;
  uint32_t height = 0;
  if (TIFFGetField(raw, TIFFTAG_IMAGEWIDTH, &width) != 1 || TIFFGetField(raw, TIFFTAG_IMAGELENGTH, &height) != 1) {
    return corrupt("TIFF", "image width or length tag is missing");
  }
  TRY(check_dimensions("TIFF", height, width));
  size = ImageSize{height, width};
  return tif;
}

// 8-bit interleaved grey or RGB strips, with or without extra samples (alpha), read line by line: the colour
// values as stored. libtiff's RGBA reader premultiplies unassociated alpha into them, which an image decoder that
// drops alpha must not do (a pixel of alpha 0 would lose its colour). False where the layout is another one.
Expected<bool> read_8bit_strips(TIFF* tif, ImageSize size, uint8_t* rgb) {
  uint16_t bits = 0, samples = 0, planar = 0, photometric = 0;
  if (TIFFIsTiled(tif) || TIFFGetFieldDefaulted(tif, TIFFTAG_BITSPERSAMPLE, &bits) != 1 || bits != 8 ||
      TIFFGetFieldDefaulted(tif, TIFFTAG_SAMPLESPERPIXEL, &samples) != 1 ||
      TIFFGetFieldDefaulted(tif, TIFFTAG_PLANARCONFIG, &planar) != 1 || planar != PLANARCONFIG_CONTIG ||
      TIFFGetField(tif, TIFFTAG_PHOTOMETRIC, &photometric) != 1) {
    return false;
  }
  const bool grey = photometric == PHOTOMETRIC_MINISBLACK && samples >= 1 && samples <= 2;
  const bool colour = photometric == PHOTOMETRIC_RGB && samples >= 3 && samples <= 4;
  if (!grey && !colour) return false;
  std::vector<uint8_t> line(static_cast<size_t>(TIFFScanlineSize(tif)));
  if (line.size() < static_cast<size_t>(size.width) * samples) return corrupt("TIFF", "scanline is too short");
  for (int64_t y = 0; y < size.height; ++y) {
    if (TIFFReadScanline(tif, line.data(), static_cast<uint32_t>(y), 0) != 1) {
      return corrupt("TIFF", "cannot read scanline " + std::to_string(y));
    }
    uint8_t* out = rgb + 3 * y * size.width;
    for (int64_t x = 0; x < size.width; ++x) {
      const uint8_t* pixel = line.data() + x * samples;
      out[3 * x] = pixel[0];
      out[3 * x + 1] = grey ? pixel[0] : pixel[1];
      out[3 * x + 2] = grey ? pixel[0] : pixel[2];
    }
  }
  return true;
}

}  // namespace

Expected<ImageSize> tiff_size(Bytes data) {
  MemoryStream stream{data};
  ImageSize size;
  TRY_ASSIGN(auto tif, open_tiff(stream, size));
  return size;
}

Status tiff_decode(Bytes data, ImageSize size, uint8_t* rgb) {
  MemoryStream stream{data};
  ImageSize actual;
  TRY_ASSIGN(auto tif, open_tiff(stream, actual));
  if (actual.height != size.height || actual.width != size.width) return corrupt("TIFF", "dimensions changed");
  TRY_ASSIGN(const bool read_directly, read_8bit_strips(tif.get(), size, rgb));
  if (read_directly) return Status::ok();
  char message[1024] = {};
  if (TIFFRGBAImageOK(tif.get(), message) != 1) {
    return make_error(StatusCode::kInvalidArgument, "TIFF image is not supported: ", message);
  }
  // libtiff converts every photometric interpretation to packed ABGR (red in the low byte).
  std::vector<uint32_t> raster(static_cast<size_t>(size.height * size.width));
  if (TIFFReadRGBAImageOriented(tif.get(), static_cast<uint32_t>(size.width), static_cast<uint32_t>(size.height),
                                raster.data(), ORIENTATION_TOPLEFT, 1) != 1) {
    return corrupt("TIFF", stream.error.empty() ? "cannot read the pixel data" : stream.error);
  }
  for (size_t i = 0; i < raster.size(); ++i) {
    rgb[3 * i] = static_cast<uint8_t>(TIFFGetR(raster[i]));
    rgb[3 * i + 1] = static_cast<uint8_t>(TIFFGetG(raster[i]));
    rgb[3 * i + 2] = static_cast<uint8_t>(TIFFGetB(raster[i]));
  }
  return Status::ok();
}

#else

Expected<ImageSize> tiff_size(Bytes) { return missing_library("TIFF", "libtiff", "libtiff-dev"); }
Status tiff_decode(Bytes, ImageSize, uint8_t*) { return missing_library("TIFF", "libtiff", "libtiff-dev"); }

#endif

#ifdef NXRT_HAVE_LIBWEBP

Expected<ImageSize> webp_size(Bytes data) {
  int width = 0;
  int height = 0;
  if (WebPGetInfo(data.data(), data.size(), &width, &height) == 0) return corrupt("WebP", "cannot read the header");
  TRY(check_dimensions("WebP", height, width));
  return ImageSize{height, width};
}

Status webp_decode(Bytes data, ImageSize size, uint8_t* rgb) {
  TRY_ASSIGN(const ImageSize actual, webp_size(data));
  if (actual.height != size.height || actual.width != size.width) return corrupt("WebP", "dimensions changed");
  const auto bytes = static_cast<size_t>(size.rgb_bytes());
  if (WebPDecodeRGBInto(data.data(), data.size(), rgb, bytes, static_cast<int>(size.width * 3)) == nullptr) {
    return corrupt("WebP", "cannot decode the bitstream");
  }
  return Status::ok();
}

#else

Expected<ImageSize> webp_size(Bytes) { return missing_library("WebP", "libwebp", "libwebp-dev"); }
Status webp_decode(Bytes, ImageSize, uint8_t*) { return missing_library("WebP", "libwebp", "libwebp-dev"); }

#endif

#ifdef NXRT_HAVE_OPENJPEG

namespace {

OPJ_SIZE_T opj_read(void* buffer, OPJ_SIZE_T count, void* user_data) {
  auto* stream = static_cast<MemoryStream*>(user_data);
  if (stream->position >= stream->data.size()) return static_cast<OPJ_SIZE_T>(-1);
  const uint64_t n = std::min<uint64_t>(count, stream->data.size() - stream->position);
  std::memcpy(buffer, stream->data.data() + stream->position, n);
  stream->position += n;
  return static_cast<OPJ_SIZE_T>(n);
}
OPJ_OFF_T opj_skip(OPJ_OFF_T count, void* user_data) {
  auto* stream = static_cast<MemoryStream*>(user_data);
  const int64_t target = static_cast<int64_t>(stream->position) + count;
  if (target < 0 || target > static_cast<int64_t>(stream->data.size())) return -1;
  stream->position = static_cast<uint64_t>(target);
  return count;
}
OPJ_BOOL opj_seek(OPJ_OFF_T offset, void* user_data) {
  auto* stream = static_cast<MemoryStream*>(user_data);
  if (offset < 0 || offset > static_cast<OPJ_OFF_T>(stream->data.size())) return OPJ_FALSE;
  stream->position = static_cast<uint64_t>(offset);
  return OPJ_TRUE;
}
void opj_record_error(const char* message, void* user_data) {
  auto* stream = static_cast<MemoryStream*>(user_data);
  if (stream->error.empty()) {
    stream->error = message;
    while (!stream->error.empty() && stream->error.back() == '\n') stream->error.pop_back();
  }
}
void opj_ignore(const char*, void*) {}

// Codec, stream and image with their OpenJPEG destructors; the header is read on construction.
struct Jpeg2000Reader {
  MemoryStream source;
  opj_codec_t* codec = nullptr;
  opj_stream_t* stream = nullptr;
  opj_image_t* image = nullptr;

  explicit Jpeg2000Reader(Bytes data) : source{data} {}
  ~Jpeg2000Reader() {
    if (image != nullptr) opj_image_destroy(image);
    if (stream != nullptr) opj_stream_destroy(stream);
    if (codec != nullptr) opj_destroy_codec(codec);
  }
  Jpeg2000Reader(const Jpeg2000Reader&) = delete;
  Jpeg2000Reader& operator=(const Jpeg2000Reader&) = delete;

  Status failure(std::string_view fallback) const {
    return corrupt("JPEG 2000", source.error.empty() ? fallback : std::string_view(source.error));
  }

  Expected<ImageSize> read_header() {
    const bool codestream = source.data.size() >= 2 && source.data[0] == 0xFF && source.data[1] == 0x4F;
    codec = opj_create_decompress(codestream ? OPJ_CODEC_J2K : OPJ_CODEC_JP2);
    stream = opj_stream_create(OPJ_J2K_STREAM_CHUNK_SIZE, OPJ_TRUE);
    if (codec == nullptr || stream == nullptr) return corrupt("JPEG 2000", "cannot create the decoder");
    opj_set_error_handler(codec, opj_record_error, &source);
    opj_set_warning_handler(codec, opj_ignore, nullptr);
    opj_set_info_handler(codec, opj_ignore, nullptr);
    opj_stream_set_user_data(stream, &source, nullptr);
    opj_stream_set_user_data_length(stream, source.data.size());
    opj_stream_set_read_function(stream, opj_read);
    opj_stream_set_skip_function(stream, opj_skip);
    opj_stream_set_seek_function(stream, opj_seek);
    opj_dparameters_t parameters;
    opj_set_default_decoder_parameters(&parameters);
    if (opj_setup_decoder(codec, &parameters) == OPJ_FALSE) return failure("cannot set up the decoder");
    if (opj_read_header(stream, codec, &image) == OPJ_FALSE || image == nullptr) {
      return failure("cannot read the header");
    }
    if (image->x1 <= image->x0 || image->y1 <= image->y0) return corrupt("JPEG 2000", "image area is empty");
    const int64_t height = static_cast<int64_t>(image->y1) - image->y0;
    const int64_t width = static_cast<int64_t>(image->x1) - image->x0;
    TRY(check_dimensions("JPEG 2000", height, width));
    return ImageSize{height, width};
  }
};

uint8_t to_byte(int32_t value, const opj_image_comp_t& component) {
  int64_t v = value;
  if (component.sgnd != 0) v += int64_t{1} << (component.prec - 1);
  if (component.prec > 8) {
    v >>= component.prec - 8;
  } else if (component.prec < 8) {
    const int64_t max_value = (int64_t{1} << component.prec) - 1;
    v = (v * 255 + max_value / 2) / max_value;
  }
  return static_cast<uint8_t>(std::clamp<int64_t>(v, 0, 255));
}

}  // namespace

Expected<ImageSize> jpeg2000_size(Bytes data) {
  Jpeg2000Reader reader(data);
  return reader.read_header();
}

Status jpeg2000_decode(Bytes data, ImageSize size, uint8_t* rgb) {
  Jpeg2000Reader reader(data);
  TRY_ASSIGN(const ImageSize actual, reader.read_header());
  if (actual.height != size.height || actual.width != size.width) return corrupt("JPEG 2000", "dimensions changed");
  if (opj_decode(reader.codec, reader.stream, reader.image) == OPJ_FALSE ||
      opj_end_decompress(reader.codec, reader.stream) == OPJ_FALSE) {
    return reader.failure("cannot decode the codestream");
  }
  const opj_image_t& image = *reader.image;
  if (image.numcomps == 0) return corrupt("JPEG 2000", "image has no components");
  const uint32_t used = image.numcomps >= 3 ? 3 : 1;
  for (uint32_t c = 0; c < used; ++c) {
    const opj_image_comp_t& component = image.comps[c];
    if (component.data == nullptr || component.w != size.width || component.h != size.height) {
      return make_error(StatusCode::kNotImplemented,
                        "JPEG 2000 images with subsampled components are not supported");
    }
    if (component.prec < 1 || component.prec > 31) return corrupt("JPEG 2000", "component precision out of range");
  }
  const int64_t pixels = size.height * size.width;
  for (int64_t i = 0; i < pixels; ++i) {
    for (uint32_t c = 0; c < 3; ++c) {
      const opj_image_comp_t& component = image.comps[used == 3 ? c : 0];
      rgb[3 * i + c] = to_byte(component.data[i], component);
    }
  }
  return Status::ok();
}

#else

Expected<ImageSize> jpeg2000_size(Bytes) { return missing_library("JPEG 2000", "OpenJPEG", "libopenjp2-7-dev"); }
Status jpeg2000_decode(Bytes, ImageSize, uint8_t*) {
  return missing_library("JPEG 2000", "OpenJPEG", "libopenjp2-7-dev");
}

#endif

}  // namespace nxrt::cpu::image
