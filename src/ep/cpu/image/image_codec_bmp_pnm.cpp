// BMP and PNM (PBM/PGM/PPM, plain and raw) decoders, written against the buffer with every read checked.
#include <algorithm>
#include <array>
#include <cstring>
#include <vector>

#include "ep/cpu/image/image_codec.h"

namespace nxrt::cpu::image {

namespace {

uint32_t read_u16le(Bytes data, size_t at) { return uint32_t{data[at]} | (uint32_t{data[at + 1]} << 8); }

uint32_t read_u32le(Bytes data, size_t at) {
  return uint32_t{data[at]} | (uint32_t{data[at + 1]} << 8) | (uint32_t{data[at + 2]} << 16) |
         (uint32_t{data[at + 3]} << 24);
}

Status bmp_error(std::string_view problem) {
  return make_error(StatusCode::kInvalidArgument, "corrupt BMP image: ", problem);
}

// A channel of a BI_BITFIELDS pixel: its mask, where it starts and how many bits it has.
struct Channel {
  uint32_t mask = 0;
  int shift = 0;
  int bits = 0;

  static Channel from_mask(uint32_t mask) {
    Channel c;
    c.mask = mask;
    if (mask == 0) return c;
    while (((mask >> c.shift) & 1u) == 0) ++c.shift;
    while (c.shift + c.bits < 32 && ((mask >> (c.shift + c.bits)) & 1u) != 0) ++c.bits;
    return c;
  }
  uint8_t extract(uint32_t pixel) const {
    if (bits == 0) return 0;
    const uint64_t value = (pixel & mask) >> shift;
    if (bits >= 8) return static_cast<uint8_t>(value >> (bits - 8));
    const uint64_t max_value = (uint64_t{1} << bits) - 1;
    return static_cast<uint8_t>((value * 255 + max_value / 2) / max_value);
  }
};

struct BmpLayout {
  int64_t width = 0;
  int64_t height = 0;
  bool top_down = false;
  uint32_t bits_per_pixel = 0;
  uint32_t compression = 0;
  size_t pixel_offset = 0;
  size_t header_end = 0;   // first byte after the info header (and its trailing masks)
  size_t palette_entry = 4;
  uint32_t colours_used = 0;
  std::array<Channel, 3> channels{};
};

constexpr uint32_t kBiRgb = 0;
constexpr uint32_t kBiBitfields = 3;
constexpr uint32_t kBiAlphaBitfields = 6;

Expected<BmpLayout> parse_bmp(Bytes data) {
  if (data.size() < 26 || data[0] != 'B' || data[1] != 'M') return bmp_error("file header is truncated");
  BmpLayout layout;
  layout.pixel_offset = read_u32le(data, 10);
  const uint32_t info_size = read_u32le(data, 14);
  if (info_size > data.size() - 14) return bmp_error("info header is truncated");
  int64_t signed_height = 0;
  if (info_size == 12) {
    layout.width = read_u16le(data, 18);
    signed_height = read_u16le(data, 20);
    layout.bits_per_pixel = read_u16le(data, 24);
    layout.palette_entry = 3;
    layout.header_end = 26;
  } else if (info_size >= 40) {
    layout.width = static_cast<int32_t>(read_u32le(data, 18));
    signed_height = static_cast<int32_t>(read_u32le(data, 22));
    layout.bits_per_pixel = read_u16le(data, 28);
    layout.compression = read_u32le(data, 30);
    layout.colours_used = read_u32le(data, 46);
    layout.header_end = 14 + info_size;
  } else {
    return make_error(StatusCode::kInvalidArgument, "corrupt BMP image: info header size ", info_size,
                      " is not 12 or at least 40");
  }
  if (layout.width <= 0) return bmp_error("width is not positive");
  layout.top_down = signed_height < 0;
  layout.height = signed_height < 0 ? -signed_height : signed_height;
  TRY(check_dimensions("BMP", layout.height, layout.width));

  const uint32_t bpp = layout.bits_per_pixel;
  if (bpp != 1 && bpp != 4 && bpp != 8 && bpp != 16 && bpp != 24 && bpp != 32) {
    return make_error(StatusCode::kInvalidArgument, "BMP bit depth ", bpp, " is not supported");
  }
  if (layout.compression == kBiBitfields || layout.compression == kBiAlphaBitfields) {
    if (bpp != 16 && bpp != 32) return bmp_error("bit-field compression needs 16 or 32 bits per pixel");
    // A 40-byte header is followed by the masks; larger headers hold them at the same offset.
    const size_t masks_end = 54 + 12;
    if (masks_end > data.size()) return bmp_error("colour masks are truncated");
    for (size_t c = 0; c < 3; ++c) layout.channels[c] = Channel::from_mask(read_u32le(data, 54 + 4 * c));
    if (info_size == 40) layout.header_end = masks_end + (layout.compression == kBiAlphaBitfields ? 4 : 0);
  } else if (layout.compression != kBiRgb) {
    return make_error(StatusCode::kInvalidArgument, "BMP compression ", layout.compression,
                      " is not supported (only uncompressed and bit-field images are)");
  } else if (bpp == 16) {
    layout.channels = {Channel::from_mask(0x7C00), Channel::from_mask(0x03E0), Channel::from_mask(0x001F)};
  } else if (bpp == 32 || bpp == 24) {
    layout.channels = {Channel::from_mask(0xFF0000), Channel::from_mask(0xFF00), Channel::from_mask(0xFF)};
  }
  return layout;
}

}  // namespace

Expected<ImageSize> bmp_size(Bytes data) {
  TRY_ASSIGN(const BmpLayout layout, parse_bmp(data));
  return ImageSize{layout.height, layout.width};
}

Status bmp_decode(Bytes data, ImageSize size, uint8_t* rgb) {
  TRY_ASSIGN(const BmpLayout layout, parse_bmp(data));
  if (layout.height != size.height || layout.width != size.width) return bmp_error("dimensions changed");
  const uint32_t bpp = layout.bits_per_pixel;
  const int64_t stride = (layout.width * bpp + 31) / 32 * 4;
  if (layout.pixel_offset > data.size() ||
      stride * layout.height > static_cast<int64_t>(data.size() - layout.pixel_offset)) {
    return bmp_error("pixel data is truncated");
  }

  std::vector<std::array<uint8_t, 3>> palette;
  if (bpp <= 8) {
    const uint32_t max_colours = 1u << bpp;
    const uint32_t count = layout.colours_used == 0 ? max_colours : layout.colours_used;
    if (count > max_colours) return bmp_error("palette has more colours than the bit depth allows");
    if (layout.header_end + size_t{count} * layout.palette_entry > data.size()) {
      return bmp_error("palette is truncated");
    }
    for (uint32_t i = 0; i < count; ++i) {
      const size_t at = layout.header_end + size_t{i} * layout.palette_entry;
      palette.push_back({data[at + 2], data[at + 1], data[at]});
    }
  }

  for (int64_t y = 0; y < layout.height; ++y) {
    const int64_t source_row = layout.top_down ? y : layout.height - 1 - y;
    const uint8_t* row = data.data() + layout.pixel_offset + source_row * stride;
    uint8_t* out = rgb + y * layout.width * 3;
    for (int64_t x = 0; x < layout.width; ++x, out += 3) {
      if (bpp <= 8) {
        const int64_t bit = x * bpp;
        const uint32_t shift = 8 - bpp - static_cast<uint32_t>(bit % 8);
        const uint32_t index = (row[bit / 8] >> shift) & ((1u << bpp) - 1);
        if (index >= palette.size()) return bmp_error("pixel refers past the end of the palette");
        std::memcpy(out, palette[index].data(), 3);
        continue;
      }
      uint32_t pixel = 0;
      const uint8_t* p = row + x * (bpp / 8);
      if (bpp == 16) pixel = uint32_t{p[0]} | (uint32_t{p[1]} << 8);
      if (bpp == 24) pixel = uint32_t{p[0]} | (uint32_t{p[1]} << 8) | (uint32_t{p[2]} << 16);
      if (bpp == 32) {
        pixel = uint32_t{p[0]} | (uint32_t{p[1]} << 8) | (uint32_t{p[2]} << 16) | (uint32_t{p[3]} << 24);
      }
      for (size_t c = 0; c < 3; ++c) out[c] = layout.channels[c].extract(pixel);
    }
  }
  return Status::ok();
}

namespace {

Status pnm_error(std::string_view problem) {
  return make_error(StatusCode::kInvalidArgument, "corrupt PNM image: ", problem);
}

// Walks the text parts of a PNM stream: header fields and plain-format samples.
class PnmReader {
 public:
  explicit PnmReader(Bytes data) : data_(data) {}

  // Skips whitespace and '#' comments, then reads a decimal number up to `limit`.
  Expected<uint32_t> number(std::string_view what, uint32_t limit) {
    skip_space_and_comments();
    if (pos_ >= data_.size() || data_[pos_] < '0' || data_[pos_] > '9') {
      return make_error(StatusCode::kInvalidArgument, "corrupt PNM image: ", what,
                        " is missing or not a number");
    }
    uint64_t value = 0;
    while (pos_ < data_.size() && data_[pos_] >= '0' && data_[pos_] <= '9') {
      value = value * 10 + (data_[pos_++] - '0');
      if (value > limit) {
        return make_error(StatusCode::kInvalidArgument, "corrupt PNM image: ", what, " exceeds ",
                          limit);
      }
    }
    return static_cast<uint32_t>(value);
  }
  // A plain PBM sample: one '0' or '1', whitespace optional between samples.
  Expected<uint32_t> bit() {
    skip_space_and_comments();
    if (pos_ >= data_.size() || (data_[pos_] != '0' && data_[pos_] != '1')) return pnm_error("bitmap sample is missing");
    return static_cast<uint32_t>(data_[pos_++] - '0');
  }
  // After the last header field of a raw format: exactly one whitespace byte.
  Status end_header() {
    if (pos_ >= data_.size() || !is_space(data_[pos_])) return pnm_error("no whitespace after the header");
    ++pos_;
    return Status::ok();
  }
  size_t position() const { return pos_; }

 private:
  static bool is_space(uint8_t c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }
  void skip_space_and_comments() {
    while (pos_ < data_.size()) {
      if (is_space(data_[pos_])) {
        ++pos_;
      } else if (data_[pos_] == '#') {
        while (pos_ < data_.size() && data_[pos_] != '\n' && data_[pos_] != '\r') ++pos_;
      } else {
        break;
      }
    }
  }
  Bytes data_;
  size_t pos_ = 2;
};

struct PnmHeader {
  char kind = 0;  // '1'..'6'
  int64_t width = 0;
  int64_t height = 0;
  uint32_t max_value = 1;
  size_t data_offset = 0;  // raw formats: first pixel byte
};

Expected<PnmHeader> parse_pnm(Bytes data, PnmReader& reader) {
  if (data.size() < 2 || data[0] != 'P' || data[1] < '1' || data[1] > '6') return pnm_error("bad magic number");
  PnmHeader header;
  header.kind = static_cast<char>(data[1]);
  TRY_ASSIGN(header.width, reader.number("width", static_cast<uint32_t>(kMaxSide)));
  TRY_ASSIGN(header.height, reader.number("height", static_cast<uint32_t>(kMaxSide)));
  TRY(check_dimensions("PNM", header.height, header.width));
  if (header.kind != '1' && header.kind != '4') {
    TRY_ASSIGN(header.max_value, reader.number("maximum value", 65535));
    if (header.max_value == 0) return pnm_error("maximum value is 0");
  }
  if (header.kind >= '4') TRY(reader.end_header());
  header.data_offset = reader.position();
  return header;
}

uint8_t scale_sample(uint32_t value, uint32_t max_value) {
  if (max_value == 255) return static_cast<uint8_t>(value);
  return static_cast<uint8_t>((uint64_t{value} * 255 + max_value / 2) / max_value);
}

}  // namespace

Expected<ImageSize> pnm_size(Bytes data) {
  PnmReader reader(data);
  TRY_ASSIGN(const PnmHeader header, parse_pnm(data, reader));
  return ImageSize{header.height, header.width};
}

Status pnm_decode(Bytes data, ImageSize size, uint8_t* rgb) {
  PnmReader reader(data);
  TRY_ASSIGN(const PnmHeader header, parse_pnm(data, reader));
  if (header.height != size.height || header.width != size.width) return pnm_error("dimensions changed");
  const int64_t pixels = header.height * header.width;
  const bool colour = header.kind == '3' || header.kind == '6';
  const int64_t samples = pixels * (colour ? 3 : 1);
  const uint32_t max_value = header.max_value;

  std::vector<uint8_t> values(static_cast<size_t>(samples));
  if (header.kind == '1' || header.kind == '2' || header.kind == '3') {
    for (int64_t i = 0; i < samples; ++i) {
      uint32_t v = 0;
      if (header.kind == '1') {
        TRY_ASSIGN(v, reader.bit());
        v = v == 0 ? 255 : 0;  // PBM: 1 is black
      } else {
        TRY_ASSIGN(v, reader.number("sample", 65535));
        if (v > max_value) return pnm_error("sample exceeds the maximum value");
        v = scale_sample(v, max_value);
      }
      values[static_cast<size_t>(i)] = static_cast<uint8_t>(v);
    }
  } else if (header.kind == '4') {
    const int64_t stride = (header.width + 7) / 8;
    if (stride * header.height > static_cast<int64_t>(data.size() - header.data_offset)) {
      return pnm_error("bitmap data is truncated");
    }
    for (int64_t y = 0; y < header.height; ++y) {
      const uint8_t* row = data.data() + header.data_offset + y * stride;
      for (int64_t x = 0; x < header.width; ++x) {
        const bool black = ((row[x / 8] >> (7 - x % 8)) & 1u) != 0;
        values[static_cast<size_t>(y * header.width + x)] = black ? 0 : 255;
      }
    }
  } else {
    const int64_t width_bytes = max_value > 255 ? 2 : 1;
    if (samples * width_bytes > static_cast<int64_t>(data.size() - header.data_offset)) {
      return pnm_error("pixel data is truncated");
    }
    const uint8_t* p = data.data() + header.data_offset;
    for (int64_t i = 0; i < samples; ++i) {
      const uint32_t v = width_bytes == 2 ? (uint32_t{p[2 * i]} << 8) | p[2 * i + 1] : uint32_t{p[i]};
      if (v > max_value) return pnm_error("sample exceeds the maximum value");
      values[static_cast<size_t>(i)] = scale_sample(v, max_value);
    }
  }

  if (colour) {
    std::copy(values.begin(), values.end(), rgb);
  } else {
    for (int64_t i = 0; i < pixels; ++i) std::fill_n(rgb + 3 * i, 3, values[static_cast<size_t>(i)]);
  }
  return Status::ok();
}

}  // namespace nxrt::cpu::image
