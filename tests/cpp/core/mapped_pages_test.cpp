// release_mapped_pages: resident pages of a registered read-only file mapping go, the bytes read the same
// afterwards, and memory outside the registered mappings is left alone.
#include "core/mapped_pages.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace nxrt {
namespace {

// The resident size in kB of the mapping that starts at `base` (/proc/self/smaps), or -1 when unknown.
long resident_kb(const void* base) {
  std::FILE* smaps = std::fopen("/proc/self/smaps", "r");
  if (smaps == nullptr) return -1;
  char line[512];
  bool inside = false;
  long kb = -1;
  while (std::fgets(line, sizeof line, smaps) != nullptr) {
    unsigned long begin = 0, end = 0;
    if (std::sscanf(line, "%lx-%lx ", &begin, &end) == 2 && std::strchr(line, ':') != nullptr &&
        std::string(line).find(" r") != std::string::npos) {
      inside = begin == reinterpret_cast<uintptr_t>(base);
      continue;
    }
    if (inside && std::sscanf(line, "Rss: %ld kB", &kb) == 1) break;
  }
  std::fclose(smaps);
  return kb;
}

TEST(MappedPages, ReleasesWholePagesOfRegisteredMappingsOnly) {
  const auto page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  const size_t bytes = 16 * page;
  char path[] = "/tmp/nxrt_mapped_pages_XXXXXX";
  const int fd = ::mkstemp(path);
  ASSERT_GE(fd, 0);
  std::vector<uint8_t> content(bytes);
  for (size_t i = 0; i < bytes; ++i) content[i] = static_cast<uint8_t>(i * 7 + 3);
  ASSERT_EQ(::write(fd, content.data(), bytes), static_cast<ssize_t>(bytes));
  void* base = ::mmap(nullptr, bytes, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  ::unlink(path);
  ASSERT_NE(base, MAP_FAILED);
  const auto* mapped = static_cast<const uint8_t*>(base);
  uint64_t sum = 0;
  for (size_t i = 0; i < bytes; i += 64) sum += mapped[i];  // fault every page in
  EXPECT_GT(sum, 0u);

  const long touched = resident_kb(base);
  if (touched >= 0) {
    EXPECT_EQ(touched, static_cast<long>(bytes / 1024));
  }
  // Not registered yet: nothing happens.
  EXPECT_EQ(release_mapped_pages(mapped, bytes), 0u);
  register_file_mapping(base, bytes);
  // A range reaching past the mapping is refused; a range inside releases its whole pages only.
  EXPECT_EQ(release_mapped_pages(mapped + page, bytes), 0u);
  EXPECT_EQ(release_mapped_pages(mapped + page / 2, 4 * page), 3 * page);
  EXPECT_EQ(release_mapped_pages(mapped + page / 2, page / 4), 0u);  // no whole page inside
  EXPECT_EQ(release_mapped_pages(mapped + 8 * page, 8 * page), 8 * page);
  const long resident = resident_kb(base);
  if (resident >= 0) {
    EXPECT_LE(resident, static_cast<long>((16 - 3 - 8) * page / 1024));
  }
  // The bytes read the same (the released pages come back from the file).
  EXPECT_EQ(std::vector<uint8_t>(mapped, mapped + bytes), content);

  unregister_file_mapping(base);
  EXPECT_EQ(release_mapped_pages(mapped, bytes), 0u);
  ::munmap(base, bytes);

  // Heap memory is never released, whatever range is asked.
  std::vector<uint8_t> heap(bytes, 42);
  EXPECT_EQ(release_mapped_pages(heap.data(), heap.size()), 0u);
  EXPECT_EQ(heap, std::vector<uint8_t>(bytes, 42));
}

}  // namespace
}  // namespace nxrt
