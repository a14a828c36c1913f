// Model bytes (mmap or owned copy) and external tensor data resolved under the model directory.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>

#include "core/data_type.h"
#include "core/mapped_pages.h"
#include "onnx/model_proto.h"

namespace nxrt::onnx {
namespace {

namespace fs = std::filesystem;

class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  ~FileDescriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

// A read-only private mapping of [offset, offset + size) of an open file; `offset` need not be page aligned.
struct Mapping {
  void* base = nullptr;
  size_t mapped_size = 0;
  std::string_view bytes;
};

Expected<Mapping> map_range(int fd, uint64_t offset, uint64_t size, const std::string& path) {
  Mapping mapping;
  if (size == 0) return mapping;
  const auto page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  const uint64_t aligned = offset - offset % page;
  mapping.mapped_size = static_cast<size_t>(size + (offset - aligned));
  void* base = ::mmap(nullptr, mapping.mapped_size, PROT_READ, MAP_PRIVATE, fd, static_cast<off_t>(aligned));
  if (base == MAP_FAILED) {
    return make_error(StatusCode::kFail, "mmap of '", path, "' failed: ", std::strerror(errno));
  }
  mapping.base = base;
  register_file_mapping(base, mapping.mapped_size);
  mapping.bytes = std::string_view(static_cast<const char*>(base) + (offset - aligned), static_cast<size_t>(size));
  return mapping;
}

void unmap(const Mapping& mapping) {
  unregister_file_mapping(mapping.base);
  ::munmap(mapping.base, mapping.mapped_size);
}

class MappedModelBytes final : public ModelBytes {
 public:
  MappedModelBytes(Mapping mapping, std::string directory)
      : mapping_(mapping), directory_(std::move(directory)) {}
  ~MappedModelBytes() override {
    if (mapping_.base != nullptr) unmap(mapping_);
  }
  std::string_view bytes() const override { return mapping_.bytes; }
  const std::string& directory() const override { return directory_; }

 private:
  Mapping mapping_;
  std::string directory_;
};

class OwnedModelBytes final : public ModelBytes {
 public:
  OwnedModelBytes(std::string_view data, std::string directory) : data_(data), directory_(std::move(directory)) {}
  std::string_view bytes() const override { return data_; }
  const std::string& directory() const override { return directory_; }

 private:
  std::string data_;
  std::string directory_;
};

Expected<uint64_t> regular_file_size(int fd, const std::string& path) {
  struct stat info {};
  if (::fstat(fd, &info) != 0) {
    return make_error(StatusCode::kNoSuchFile, "Load model from ", path, " failed: ", std::strerror(errno));
  }
  if (!S_ISREG(info.st_mode)) {
    return make_error(StatusCode::kNoSuchFile, "Load model from ", path, " failed: not a regular file");
  }
  return static_cast<uint64_t>(info.st_size);
}

Expected<uint64_t> parse_decimal(std::string_view tensor, std::string_view key, std::string_view text) {
  uint64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size()) {
    return make_error(StatusCode::kInvalidArgument, "Tensor '", tensor, "': external data ", key, " '", text,
                      "' is not a non-negative integer");
  }
  return value;
}

struct ExternalLocation {
  std::string_view location;
  uint64_t offset = 0;
  uint64_t length = 0;
  bool has_length = false;
};

Expected<ExternalLocation> read_external_entries(const TensorProto& tensor) {
  ExternalLocation result;
  for (const StringStringEntry& entry : tensor.external_data) {
    if (entry.key == "location") {
      result.location = entry.value;
    } else if (entry.key == "offset") {
      TRY_ASSIGN(result.offset, parse_decimal(tensor.name, "offset", entry.value));
    } else if (entry.key == "length") {
      TRY_ASSIGN(result.length, parse_decimal(tensor.name, "length", entry.value));
      result.has_length = true;
    } else if (entry.key != "checksum") {
      return make_error(StatusCode::kInvalidArgument, "Tensor '", tensor.name, "': unknown external data key '",
                        entry.key, "'");
    }
  }
  if (result.location.empty()) {
    return make_error(StatusCode::kInvalidArgument, "Tensor '", tensor.name,
                      "': external data has no 'location' entry");
  }
  return result;
}

// The resolved path of `location` under `directory`, refusing anything that can leave the directory.
Expected<std::string> resolve_location(std::string_view tensor, std::string_view location,
                                       const std::string& directory) {
  if (location.find('\0') != std::string_view::npos) {
    return make_error(StatusCode::kInvalidArgument, "Tensor '", tensor, "': external data location contains NUL");
  }
  const fs::path relative{std::string(location)};
  if (relative.is_absolute() || location.front() == '/') {
    return make_error(StatusCode::kInvalidArgument, "Tensor '", tensor, "': external data location '", location,
                      "' is an absolute path; it must be relative to the model directory");
  }
  for (const fs::path& part : relative) {
    if (part == "..") {
      return make_error(StatusCode::kInvalidArgument, "Tensor '", tensor, "': external data location '",
                        location, "' contains '..'; it must stay inside the model directory");
    }
  }
  std::error_code ec;
  const fs::path root = fs::canonical(directory, ec);
  if (ec) {
    return make_error(StatusCode::kNoSuchFile, "Model directory '", directory, "' cannot be resolved: ",
                      ec.message());
  }
  const fs::path target = fs::canonical(root / relative, ec);
  if (ec) {
    return make_error(StatusCode::kNoSuchFile, "Tensor '", tensor, "': external data file '",
                      (fs::path(directory) / relative).string(), "' cannot be opened: ", ec.message());
  }
  const std::string root_text = root.string();
  const std::string target_text = target.string();
  const bool inside = target_text.size() > root_text.size() && target_text.compare(0, root_text.size(), root_text) == 0 &&
                      (root_text.back() == '/' || target_text[root_text.size()] == '/');
  if (!inside) {
    return make_error(StatusCode::kInvalidArgument, "Tensor '", tensor, "': external data location '", location,
                      "' resolves to '", target_text, "', outside the model directory '", root_text, "'");
  }
  return target_text;
}

}  // namespace

Expected<std::shared_ptr<const ModelBytes>> map_model_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return make_error(StatusCode::kNoSuchFile, "Load model from ", path, " failed: ", std::strerror(errno));
  }
  FileDescriptor file(fd);
  TRY_ASSIGN(const uint64_t size, regular_file_size(fd, path));
  TRY_ASSIGN(Mapping mapping, map_range(fd, 0, size, path));
  fs::path directory = fs::path(path).parent_path();
  if (directory.empty()) directory = ".";
  return std::shared_ptr<const ModelBytes>(std::make_shared<MappedModelBytes>(mapping, directory.string()));
}

std::shared_ptr<const ModelBytes> model_bytes_from_buffer(std::string_view data, std::string directory) {
  return std::make_shared<OwnedModelBytes>(data, std::move(directory));
}

Expected<ExternalData> load_external_data(const TensorProto& tensor, const std::string& model_directory) {
  if (tensor.data_location != 1) {
    if (tensor.has_raw_data) return ExternalData{tensor.raw_data, nullptr};
    return make_error(StatusCode::kInvalidArgument, "Tensor '", tensor.name,
                      "' has neither raw_data nor external data");
  }
  if (model_directory.empty()) {
    return make_error(StatusCode::kInvalidArgument, "Tensor '", tensor.name,
                      "' uses external data, which needs a model loaded from a file (this model came from memory)");
  }
  TRY_ASSIGN(const ExternalLocation where, read_external_entries(tensor));
  TRY_ASSIGN(const std::string path, resolve_location(tensor.name, where.location, model_directory));

  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return make_error(StatusCode::kNoSuchFile, "Tensor '", tensor.name, "': external data file '", path,
                      "' cannot be opened: ", std::strerror(errno));
  }
  FileDescriptor file(fd);
  TRY_ASSIGN(const uint64_t file_size, regular_file_size(fd, path));
  if (where.offset > file_size) {
    return make_error(StatusCode::kInvalidArgument, "Tensor '", tensor.name, "': external data offset ",
                      where.offset, " is past the end of '", where.location, "' (", file_size, " bytes)");
  }
  const uint64_t length = where.has_length ? where.length : file_size - where.offset;
  if (length > file_size - where.offset) {
    return make_error(StatusCode::kInvalidArgument, "Tensor '", tensor.name, "': external data range [",
                      where.offset, ", ", where.offset, " + ", length, ") exceeds the size of '", where.location,
                      "' (", file_size, " bytes)");
  }
  if (const auto type = data_type_from_int(tensor.data_type);
      type && *type != DataType::kUndefined && *type != DataType::kString) {
    int64_t count = 1;
    for (int64_t dim : tensor.dims) {
      if (dim < 0 || (dim != 0 && count > INT64_MAX / 4 / dim)) {
        return make_error(StatusCode::kInvalidArgument, "Tensor '", tensor.name, "': invalid dim ", dim);
      }
      count *= dim;
    }
    const size_t expected = data_type_storage_bytes(*type, count);
    if (length != expected) {
      return make_error(StatusCode::kInvalidArgument, "Tensor '", tensor.name, "': external data length ", length,
                        " does not match the ", expected, " bytes its dims and data_type need");
    }
  }
  TRY_ASSIGN(Mapping mapping, map_range(fd, where.offset, length, path));
  std::shared_ptr<const void> keep_alive;
  if (mapping.base != nullptr) {
    const size_t mapped_size = mapping.mapped_size;
    keep_alive = std::shared_ptr<const void>(
        mapping.base, [mapped_size](const void* base) { unmap(Mapping{const_cast<void*>(base), mapped_size, {}}); });
  }
  return ExternalData{mapping.bytes, std::move(keep_alive)};
}

}  // namespace nxrt::onnx
