#include "core/mapped_pages.h"

#include <cstdint>
#include <map>
#include <mutex>

#include <sys/mman.h>
#include <unistd.h>

namespace nxrt {
namespace {

struct Registry {
  std::mutex mutex;
  std::map<uintptr_t, size_t> mappings;  // base -> size
};

Registry& registry() {
  static Registry* instance = new Registry();  // never destroyed: mappings may outlive static destruction
  return *instance;
}

}  // namespace

void register_file_mapping(const void* base, size_t size) {
  if (base == nullptr || size == 0) return;
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  r.mappings[reinterpret_cast<uintptr_t>(base)] = size;
}

void unregister_file_mapping(const void* base) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  r.mappings.erase(reinterpret_cast<uintptr_t>(base));
}

size_t release_mapped_pages(const void* data, size_t bytes) {
  if (data == nullptr || bytes == 0) return 0;
  const auto begin = reinterpret_cast<uintptr_t>(data);
  if (begin > UINTPTR_MAX - bytes) return 0;
  const uintptr_t end = begin + bytes;
  Registry& r = registry();
  std::lock_guard lock(r.mutex);  // held through madvise, so the mapping cannot be unmapped meanwhile
  auto it = r.mappings.upper_bound(begin);
  if (it == r.mappings.begin()) return 0;
  --it;
  if (begin < it->first || end > it->first + it->second) return 0;
  const auto page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const uintptr_t first = (begin + page - 1) / page * page;
  const uintptr_t last = end / page * page;
  if (last <= first) return 0;
  if (::madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED) != 0) return 0;
  return last - first;
}

}  // namespace nxrt
