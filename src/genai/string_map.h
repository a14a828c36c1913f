// A hash map keyed by strings that is looked up by std::string_view without building a std::string per lookup
// (tokens and symbols are slices of the text being encoded).
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace nxrt::genai {

struct TransparentStringHash {
  using is_transparent = void;
  size_t operator()(std::string_view text) const { return std::hash<std::string_view>{}(text); }
};

template <class Value>
using StringMap = std::unordered_map<std::string, Value, TransparentStringHash, std::equal_to<>>;

}  // namespace nxrt::genai
