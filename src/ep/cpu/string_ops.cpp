// StringNormalizer, StringConcat, StringSplit, RegexFullMatch, TfIdfVectorizer.
#include "ep/cpu/kernel.h"

namespace nxrt::cpu {

std::span<const KernelDef> string_kernels() { return {}; }

}  // namespace nxrt::cpu
