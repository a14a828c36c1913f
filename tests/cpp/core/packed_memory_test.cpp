#include "core/packed_memory.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <utility>
#include <vector>

namespace nxrt {
namespace {

// Arrays are zero-filled, 64-byte aligned and disjoint; small ones share a region, which is returned with the
// last of them; a large array holds a region of its own.
TEST(PackedMemory, ArraysShareRegionsAndReturnThemWithTheLastArray) {
  const size_t held_before = packed_memory::regions_held();
  {
    std::vector<PackedArray<float>> small;
    for (size_t count : {1, 100, 4096, 70000}) {
      PackedArray<float> array(count);
      ASSERT_EQ(array.size(), count);
      ASSERT_EQ(reinterpret_cast<uintptr_t>(array.data()) % 64, 0u);
      for (size_t i = 0; i < count; ++i) ASSERT_EQ(array[i], 0.0f) << i;
      for (size_t i = 0; i < count; ++i) array[i] = static_cast<float>(count);
      small.push_back(std::move(array));
    }
    EXPECT_EQ(packed_memory::regions_held(), held_before + 1);
    for (const auto& array : small) {
      for (size_t i = 0; i < array.size(); ++i) ASSERT_EQ(array[i], static_cast<float>(array.size()));
    }
    PackedArray<uint8_t> large(size_t{9} << 20);
    EXPECT_EQ(packed_memory::regions_held(), held_before + 2);
    large[large.size() - 1] = 7;
    small.erase(small.begin(), small.begin() + 2);
    EXPECT_EQ(packed_memory::regions_held(), held_before + 2) << "the shared region still holds two arrays";
  }
  EXPECT_EQ(packed_memory::regions_held(), held_before);
}

TEST(PackedMemory, MovesTransferOwnershipAndEmptyArraysHoldNothing) {
  const size_t held_before = packed_memory::regions_held();
  PackedArray<double> empty;
  EXPECT_TRUE(empty.empty());
  EXPECT_EQ(empty.data(), nullptr);
  PackedArray<double> zero(0);
  EXPECT_EQ(packed_memory::regions_held(), held_before);
  PackedArray<double> a(10);
  a[3] = 2.5;
  const double* where = a.data();
  PackedArray<double> b(std::move(a));
  EXPECT_TRUE(a.empty());  // NOLINT(bugprone-use-after-move): the moved-from state is part of the contract
  EXPECT_EQ(b.data(), where);
  EXPECT_EQ(b[3], 2.5);
  a = std::move(b);
  EXPECT_EQ(a.data(), where);
  a = PackedArray<double>();
  EXPECT_EQ(packed_memory::regions_held(), held_before);
}

}  // namespace
}  // namespace nxrt
