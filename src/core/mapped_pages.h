// Read-only file mappings that tensors point into (a model file, its external data), and the release of their
// resident pages once a kernel has copied what it needs (a prepacked weight): the pages go back to the system and
// are read from the file again if anything touches them later, so a release never changes what a reader sees.
// Memory outside the registered mappings is never touched, whoever owns it.
#pragma once

#include <cstddef>

namespace nxrt {

// Called by the owner of a PROT_READ, MAP_PRIVATE file mapping [base, base + size) after mmap and before munmap.
void register_file_mapping(const void* base, size_t size);
void unregister_file_mapping(const void* base);

// Drops the resident pages lying wholly inside [data, data + bytes) when the range lies inside one registered
// mapping; otherwise does nothing. Returns the bytes released (whole pages).
size_t release_mapped_pages(const void* data, size_t bytes);

}  // namespace nxrt
