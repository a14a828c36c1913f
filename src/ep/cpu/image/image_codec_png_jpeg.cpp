// PNG (libpng) and JPEG (libjpeg-turbo) decoders. Either library is optional: the build
// defines NXRT_HAVE_LIBPNG / NXRT_HAVE_LIBJPEG when cmake/image_codecs.cmake finds it.
#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <string>

#include "ep/cpu/image/image_codec.h"

#ifdef NXRT_HAVE_LIBPNG
#include <png.h>
#endif
#ifdef NXRT_HAVE_LIBJPEG
#include <jpeglib.h>
#include <jerror.h>
#endif

namespace nxrt::cpu::image {

#ifdef NXRT_HAVE_LIBPNG

namespace {

// libpng reports fatal errors through png_error, which jumps back to the setjmp in run_libpng after the
// message is recorded. No object with a destructor lives across that jump.
struct PngState {
  Bytes data;
  size_t position = 0;
  char message[256] = {};
};

void png_read_memory(png_structp png, png_bytep out, size_t count) {
  auto* state = static_cast<PngState*>(png_get_io_ptr(png));
  if (count > state->data.size() - state->position) png_error(png, "unexpected end of data");
  std::memcpy(out, state->data.data() + state->position, count);
  state->position += count;
}

void png_record_error(png_structp png, png_const_charp message) {
  auto* state = static_cast<PngState*>(png_get_error_ptr(png));
  std::snprintf(state->message, sizeof(state->message), "%s", message);
  png_longjmp(png, 1);
}

void png_ignore_warning(png_structp, png_const_charp) {}

struct PngResult {
  bool ok = false;
  int64_t height = 0;
  int64_t width = 0;
};

// Reads the header and, when `rgb` is non-null, the pixels of exactly `expected` size. Palettes and low bit
// depths are expanded, 16-bit samples keep their high byte, alpha and transparency are dropped, grey is
// replicated; no gamma correction is applied (as in OpenCV and Pillow).
void run_libpng(PngState& state, const ImageSize* expected, uint8_t* rgb, PngResult& result) {
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &state, png_record_error, png_ignore_warning);
  if (png == nullptr) {
    std::snprintf(state.message, sizeof(state.message), "cannot create the decoder");
    return;
  }
  png_infop info = png_create_info_struct(png);
  if (info == nullptr || setjmp(png_jmpbuf(png)) != 0) {
    if (info == nullptr) std::snprintf(state.message, sizeof(state.message), "cannot create the decoder");
    png_destroy_read_struct(&png, info == nullptr ? nullptr : &info, nullptr);
    return;
  }
  png_set_read_fn(png, &state, png_read_memory);
  png_read_info(png, info);
  result.width = png_get_image_width(png, info);
  result.height = png_get_image_height(png, info);
  if (rgb != nullptr) {
    if (result.height != expected->height || result.width != expected->width) png_error(png, "dimensions changed");
    const int colour_type = png_get_color_type(png, info);
    if (colour_type == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
    if (colour_type == PNG_COLOR_TYPE_GRAY && png_get_bit_depth(png, info) < 8) {
      png_set_expand_gray_1_2_4_to_8(png);
    }
    png_set_strip_16(png);
    png_set_strip_alpha(png);
    if (colour_type == PNG_COLOR_TYPE_GRAY || colour_type == PNG_COLOR_TYPE_GRAY_ALPHA) png_set_gray_to_rgb(png);
    const int passes = png_set_interlace_handling(png);
    png_read_update_info(png, info);
    if (png_get_channels(png, info) != 3 || png_get_rowbytes(png, info) != static_cast<size_t>(result.width) * 3) {
      png_error(png, "unexpected row layout after conversion to RGB");
    }
    for (int pass = 0; pass < passes; ++pass) {
      for (int64_t y = 0; y < result.height; ++y) png_read_row(png, rgb + y * result.width * 3, nullptr);
    }
    png_read_end(png, nullptr);
  }
  png_destroy_read_struct(&png, &info, nullptr);
  result.ok = true;
}

Status png_failure(const PngState& state) {
  return make_error(StatusCode::kInvalidArgument, "corrupt PNG image: ", state.message);
}

}  // namespace

Expected<ImageSize> png_size(Bytes data) {
  PngState state{data};
  PngResult result;
  run_libpng(state, nullptr, nullptr, result);
  if (!result.ok) return png_failure(state);
  TRY(check_dimensions("PNG", result.height, result.width));
  return ImageSize{result.height, result.width};
}

Status png_decode(Bytes data, ImageSize size, uint8_t* rgb) {
  PngState state{data};
  PngResult result;
  run_libpng(state, &size, rgb, result);
  if (!result.ok) return png_failure(state);
  return Status::ok();
}

#else

Expected<ImageSize> png_size(Bytes) {
  return make_error(StatusCode::kNotImplemented,
                    "PNG support was not built; install libpng (Debian: libpng-dev) and rebuild");
}
Status png_decode(Bytes, ImageSize, uint8_t*) { return png_size({}).status(); }

#endif

#ifdef NXRT_HAVE_LIBJPEG

namespace {

// libjpeg reports fatal errors through error_exit, which must not return: it jumps back to the setjmp in
// the function that called into the library. No object with a destructor lives across that jump.
struct JpegErrorManager {
  jpeg_error_mgr manager;
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

void jpeg_error_exit(j_common_ptr cinfo) {
  auto* errors = reinterpret_cast<JpegErrorManager*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, errors->message);
  std::longjmp(errors->jump, 1);
}

// Warnings are tolerated except running out of data, which libjpeg would otherwise pad with grey.
void jpeg_emit_message(j_common_ptr cinfo, int level) {
  if (level < 0 && cinfo->err->msg_code == JWRN_JPEG_EOF) jpeg_error_exit(cinfo);
}

struct JpegResult {
  bool ok = false;
  int64_t height = 0;
  int64_t width = 0;
  char message[JMSG_LENGTH_MAX] = {};
};

// Reads the header and, when `rgb` is non-null, the RGB pixels of exactly `expected` size.
void run_libjpeg(Bytes data, const ImageSize* expected, uint8_t* rgb, JpegResult& result) {
  jpeg_decompress_struct cinfo;
  JpegErrorManager errors;
  cinfo.err = jpeg_std_error(&errors.manager);
  errors.manager.error_exit = jpeg_error_exit;
  errors.manager.emit_message = jpeg_emit_message;
  errors.message[0] = '\0';
  if (setjmp(errors.jump) != 0) {
    std::snprintf(result.message, sizeof(result.message), "%s", errors.message);
    jpeg_destroy_decompress(&cinfo);
    return;
  }
  jpeg_create_decompress(&cinfo);
  jpeg_mem_src(&cinfo, data.data(), static_cast<unsigned long>(data.size()));
  jpeg_read_header(&cinfo, TRUE);
  result.height = cinfo.image_height;
  result.width = cinfo.image_width;
  if (rgb != nullptr) {
    if (result.height != expected->height || result.width != expected->width) {
      std::snprintf(result.message, sizeof(result.message), "dimensions changed");
      jpeg_destroy_decompress(&cinfo);
      return;
    }
    // libjpeg's defaults (islow DCT, fancy upsampling) are what Pillow and OpenCV decode with.
    cinfo.out_color_space = JCS_RGB;
    jpeg_start_decompress(&cinfo);
    if (cinfo.output_components != 3) {
      std::snprintf(result.message, sizeof(result.message), "decoder produced %d components",
                    cinfo.output_components);
      jpeg_destroy_decompress(&cinfo);
      return;
    }
    while (cinfo.output_scanline < cinfo.output_height) {
      JSAMPROW row = rgb + static_cast<size_t>(cinfo.output_scanline) * cinfo.output_width * 3;
      jpeg_read_scanlines(&cinfo, &row, 1);
    }
    jpeg_finish_decompress(&cinfo);
  }
  jpeg_destroy_decompress(&cinfo);
  result.ok = true;
}

}  // namespace

Expected<ImageSize> jpeg_size(Bytes data) {
  JpegResult result;
  run_libjpeg(data, nullptr, nullptr, result);
  if (!result.ok) {
    return make_error(StatusCode::kInvalidArgument, "corrupt JPEG image: ", result.message);
  }
  TRY(check_dimensions("JPEG", result.height, result.width));
  return ImageSize{result.height, result.width};
}

Status jpeg_decode(Bytes data, ImageSize size, uint8_t* rgb) {
  JpegResult result;
  run_libjpeg(data, &size, rgb, result);
  if (!result.ok) {
    return make_error(StatusCode::kInvalidArgument, "corrupt JPEG image: ", result.message);
  }
  return Status::ok();
}

#else

Expected<ImageSize> jpeg_size(Bytes) {
  return make_error(StatusCode::kNotImplemented,
                    "JPEG support was not built; install libjpeg (Debian: libjpeg62-turbo-dev) and "
                    "rebuild");
}
Status jpeg_decode(Bytes, ImageSize, uint8_t*) { return jpeg_size({}).status(); }

#endif

}  // namespace nxrt::cpu::image
