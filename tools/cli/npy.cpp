#include "npy.h"

#include <cstring>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>

#include "core/data_type.h"
#include "core/shape.h"

namespace nxrt::cli {

namespace {

constexpr std::string_view kMagic = "\x93NUMPY";

struct DtypeCode {
  DataType type;
  const char* code;  // without the byte-order character
};

constexpr DtypeCode kDtypeCodes[] = {
    {DataType::kFloat32, "f4"}, {DataType::kFloat64, "f8"},   {DataType::kFloat16, "f2"},
    {DataType::kInt8, "i1"},    {DataType::kInt16, "i2"},     {DataType::kInt32, "i4"},
    {DataType::kInt64, "i8"},   {DataType::kUInt8, "u1"},     {DataType::kUInt16, "u2"},
    {DataType::kUInt32, "u4"},  {DataType::kUInt64, "u8"},    {DataType::kBool, "b1"},
    {DataType::kComplex64, "c8"}, {DataType::kComplex128, "c16"},
};

size_t byte_at(std::string_view bytes, size_t index) { return static_cast<unsigned char>(bytes[index]); }

Status npy_error(std::string_view what) {
  return make_error(StatusCode::kInvalidArgument, "invalid .npy data: ", what);
}

std::optional<DataType> dtype_from_descr(std::string_view descr) {
  if (descr.size() < 3) return std::nullopt;
  const char order = descr[0];
  std::string_view code = descr.substr(1);
  for (const DtypeCode& entry : kDtypeCodes) {
    if (code != entry.code) continue;
    const bool single_byte = data_type_bits(entry.type) == 8;
    if (order == '<' || order == '=' || (order == '|' && single_byte)) return entry.type;
    return std::nullopt;
  }
  return std::nullopt;
}

// Value text following `'key':` in the header dictionary, with leading spaces skipped.
std::optional<std::string_view> dict_value(std::string_view header, std::string_view key) {
  for (char quote : {'\'', '"'}) {
    std::string pattern = std::string(1, quote) + std::string(key) + std::string(1, quote);
    size_t at = header.find(pattern);
    if (at == std::string_view::npos) continue;
    at = header.find(':', at + pattern.size());
    if (at == std::string_view::npos) return std::nullopt;
    ++at;
    while (at < header.size() && header[at] == ' ') ++at;
    return header.substr(at);
  }
  return std::nullopt;
}

Expected<std::string> parse_descr(std::string_view header) {
  std::optional<std::string_view> value = dict_value(header, "descr");
  if (!value || value->empty() || ((*value)[0] != '\'' && (*value)[0] != '"')) {
    return npy_error("header has no 'descr' string");
  }
  const size_t end = value->find((*value)[0], 1);
  if (end == std::string_view::npos) return npy_error("unterminated 'descr' string");
  return std::string(value->substr(1, end - 1));
}

Expected<Shape> parse_shape(std::string_view header) {
  std::optional<std::string_view> value = dict_value(header, "shape");
  if (!value || value->empty() || (*value)[0] != '(') return npy_error("header has no 'shape' tuple");
  const size_t end = value->find(')');
  if (end == std::string_view::npos) return npy_error("unterminated 'shape' tuple");
  std::string_view body = value->substr(1, end - 1);
  Shape shape;
  size_t at = 0;
  while (at < body.size()) {
    while (at < body.size() && (body[at] == ' ' || body[at] == ',')) ++at;
    if (at >= body.size()) break;
    int64_t dim = 0;
    size_t digits = 0;
    while (at < body.size() && body[at] >= '0' && body[at] <= '9') {
      if (dim > (int64_t{1} << 50)) return npy_error("shape dim is too large");
      dim = dim * 10 + (body[at] - '0');
      ++at;
      ++digits;
    }
    if (digits == 0) return npy_error("shape tuple holds something other than non-negative integers");
    if (at < body.size() && body[at] == 'L') ++at;
    shape.push_back(dim);
  }
  return shape;
}

std::optional<std::string_view> descr_of(DataType type) {
  for (const DtypeCode& entry : kDtypeCodes) {
    if (entry.type == type) return entry.code;
  }
  return std::nullopt;
}

}  // namespace

Expected<Tensor> parse_npy(std::string_view bytes) {
  if (bytes.size() < 10 || bytes.substr(0, kMagic.size()) != kMagic) return npy_error("missing \\x93NUMPY magic");
  const auto major = static_cast<unsigned char>(bytes[6]);
  size_t header_length = 0;
  size_t header_start = 0;
  if (major == 1) {
    header_length = byte_at(bytes, 8) | (byte_at(bytes, 9) << 8);
    header_start = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) return npy_error("truncated header length");
    for (size_t i = 0; i < 4; ++i) header_length |= byte_at(bytes, 8 + i) << (8 * i);
    header_start = 12;
  } else {
    return npy_error("unsupported format version " + std::to_string(major));
  }
  if (header_length > bytes.size() - header_start) return npy_error("truncated header");
  std::string_view header = bytes.substr(header_start, header_length);

  TRY_ASSIGN(std::string descr, parse_descr(header));
  std::optional<DataType> type = dtype_from_descr(descr);
  if (!type) {
    return make_error(StatusCode::kInvalidArgument, "unsupported .npy dtype '", descr,
                      "' (little-endian bool, int, uint, float and complex only)");
  }
  std::optional<std::string_view> fortran = dict_value(header, "fortran_order");
  if (!fortran) return npy_error("header has no 'fortran_order'");
  if (fortran->substr(0, 4) == "True") {
    return make_error(StatusCode::kInvalidArgument, "fortran_order .npy arrays are not supported; save with C order");
  }
  if (fortran->substr(0, 5) != "False") return npy_error("'fortran_order' is neither True nor False");
  TRY_ASSIGN(Shape shape, parse_shape(header));

  std::optional<int64_t> count = checked_numel(shape);
  if (!count) return npy_error("shape overflows");
  const size_t needed = data_type_storage_bytes(*type, *count);
  std::string_view payload = bytes.substr(header_start + header_length);
  if (payload.size() != needed) {
    return make_error(StatusCode::kInvalidArgument, "invalid .npy data: shape ", shape_to_string(shape), " of ",
                      descr, " needs ", needed, " data bytes, file has ", payload.size());
  }
  TRY_ASSIGN(Tensor tensor, Tensor::allocate(*type, std::move(shape)));
  if (needed > 0) std::memcpy(tensor.raw_data(), payload.data(), needed);
  return tensor;
}

Expected<Tensor> read_npy(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return make_error(StatusCode::kNoSuchFile, "cannot open .npy file '", path, "'");
  std::string bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  Expected<Tensor> tensor = parse_npy(bytes);
  if (!tensor) return tensor.status().with_context("'" + path + "': ");
  return tensor;
}

Expected<std::string> encode_npy(const Tensor& tensor) {
  std::optional<std::string_view> code = descr_of(tensor.dtype());
  if (!code) {
    return make_error(StatusCode::kNotImplemented, "cannot write a ", data_type_name(tensor.dtype()),
                      " tensor as .npy");
  }
  const char order = data_type_bits(tensor.dtype()) == 8 ? '|' : '<';
  std::ostringstream dict;
  dict << "{'descr': '" << order << *code << "', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < tensor.shape().size(); ++i) {
    dict << tensor.shape()[i];
    if (tensor.shape().size() == 1 || i + 1 < tensor.shape().size()) dict << ",";
    if (i + 1 < tensor.shape().size()) dict << " ";
  }
  dict << "), }";
  std::string header = dict.str();
  const bool version2 = header.size() + 11 > 65535;
  const size_t prefix = version2 ? 12 : 10;
  const size_t total = (prefix + header.size() + 1 + 63) / 64 * 64;
  header.append(total - prefix - header.size() - 1, ' ');
  header += '\n';

  std::string out(kMagic);
  out += static_cast<char>(version2 ? 2 : 1);
  out += '\0';
  const size_t length = header.size();
  for (size_t i = 0; i < (version2 ? 4u : 2u); ++i) out += static_cast<char>((length >> (8 * i)) & 0xff);
  out += header;
  out.append(static_cast<const char*>(tensor.raw_data()), tensor.storage_bytes());
  return out;
}

Status write_npy(const std::string& path, const Tensor& tensor) {
  TRY_ASSIGN(std::string bytes, encode_npy(tensor));
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file) return make_error(StatusCode::kNoSuchFile, "cannot open '", path, "' for writing");
  file.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  file.close();
  if (!file) return make_error(StatusCode::kFail, "failed to write '", path, "'");
  return Status::ok();
}

}  // namespace nxrt::cli
