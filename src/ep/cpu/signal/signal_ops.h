// Pieces of the signal family shared between signal.cpp (DFT, STFT, the table) and signal_windows.cpp.
#pragma once

#include <string>

#include "ep/cpu/kernel.h"

namespace nxrt::cpu {

// One int32/int64 value (a scalar or a 1-element 1-D tensor); INVALID_ARGUMENT naming `name` otherwise.
Expected<int64_t> read_scalar_int(const Tensor* t, const std::string& description, const std::string& name);

Expected<std::unique_ptr<Kernel>> create_hann_window(const KernelInfo& info);
Expected<std::unique_ptr<Kernel>> create_hamming_window(const KernelInfo& info);
Expected<std::unique_ptr<Kernel>> create_blackman_window(const KernelInfo& info);
Expected<std::unique_ptr<Kernel>> create_mel_weight_matrix(const KernelInfo& info);

}  // namespace nxrt::cpu
