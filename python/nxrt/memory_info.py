"""onnxruntime's memory and device descriptions (OrtMemoryInfo, OrtDevice, OrtArenaCfg and their enums), for code that
reads where a session's inputs and outputs live or configures allocators. nxrt feeds and returns host memory outside
IO binding, so a session describes every input and output as CPU memory; the arena settings are accepted and
validated as onnxruntime validates them, but nxrt's run arena sizes itself (docs/python.md)."""

import enum

__all__ = ["OrtAllocatorType", "OrtArenaCfg", "OrtDevice", "OrtDeviceMemoryType", "OrtDeviceVendorId", "OrtMemType",
           "OrtMemoryInfo", "OrtMemoryInfoDeviceType", "create_and_register_allocator",
           "create_and_register_allocator_v2"]


class OrtMemType(enum.IntEnum):
    CPU_INPUT = -2
    CPU_OUTPUT = -1
    CPU = -1
    DEFAULT = 0


class OrtAllocatorType(enum.IntEnum):
    INVALID = -1
    ORT_DEVICE_ALLOCATOR = 0
    ORT_ARENA_ALLOCATOR = 1


class OrtDeviceMemoryType(enum.IntEnum):
    DEFAULT = 0
    HOST_ACCESSIBLE = 5


class OrtMemoryInfoDeviceType(enum.IntEnum):
    CPU = 0
    GPU = 1
    FPGA = 2
    NPU = 3


class OrtDeviceVendorId(enum.IntEnum):
    NONE = 0
    AMD = 0x1002
    NVIDIA = 0x10DE
    ARM = 0x13B5
    MICROSOFT = 0x1414
    HUAWEI = 0x19E5
    QUALCOMM = 0x5143
    INTEL = 0x8086


class OrtMemoryInfo:
    """Where a value lives: OrtMemoryInfo(name, allocator_type, device_id, mem_type), or create_v2(...)."""

    def __init__(self, name, allocator_type, device_id, mem_type):
        self.name = str(name)
        self.allocator_type = OrtAllocatorType(allocator_type)
        self.device_id = int(device_id)
        self.mem_type = OrtMemType(mem_type)
        self.device_mem_type = OrtDeviceMemoryType.DEFAULT
        self.device_vendor_id = 0

    @staticmethod
    def create_v2(name, device_type, vendor_id, device_id, device_mem_type, alignment, allocator_type):
        info = OrtMemoryInfo(name, allocator_type, device_id, OrtMemType.DEFAULT)
        OrtMemoryInfoDeviceType(device_type)  # refuses unknown kinds, as onnxruntime's enum does
        info.device_vendor_id = int(vendor_id)
        info.device_mem_type = OrtDeviceMemoryType(device_mem_type)
        info._alignment = int(alignment)
        return info

    def __repr__(self):
        return (f"OrtMemoryInfo(name={self.name!r}, allocator_type={self.allocator_type.name}, "
                f"device_id={self.device_id}, mem_type={self.mem_type.name})")


def _cpu_memory_info():
    return OrtMemoryInfo("Cpu", OrtAllocatorType.ORT_ARENA_ALLOCATOR, 0, OrtMemType.DEFAULT)


class OrtDevice:
    """A device as onnxruntime numbers them: type 0 CPU, 1 GPU, 2 FPGA, 3 NPU. OrtDevice.make("cpu"|"cuda"|...,
    device_id) or OrtDevice(device_type, memory_type, device_id[, vendor_id])."""

    _TYPES = {"cpu": 0, "cuda": 1, "gpu": 1, "dml": 1, "fpga": 2, "npu": 3, "cann": 3}

    def __init__(self, device_type, memory_type=0, device_id=0, vendor_id=0):
        self._type, self._memory, self._id, self._vendor = int(device_type), int(memory_type), int(device_id), int(
            vendor_id)

    @staticmethod
    def make(device_type, device_id=0):
        kind = OrtDevice._TYPES.get(str(device_type).lower())
        if kind is None:
            raise RuntimeError(f"Unsupported device type: {device_type}")
        return OrtDevice(kind, 0, device_id, OrtDeviceVendorId.NVIDIA if kind == 1 else 0)

    def device_type(self):
        return self._type

    def device_id(self):
        return self._id

    def device_mem_type(self):
        return self._memory

    def device_vendor_id(self):
        return self._vendor

    def __repr__(self):
        return f"OrtDevice(type={self._type}, memory_type={self._memory}, id={self._id}, vendor={self._vendor})"


class OrtArenaCfg:
    """Arena settings: OrtArenaCfg(max_mem, arena_extend_strategy, initial_chunk_size_bytes,
    max_dead_bytes_per_chunk) or OrtArenaCfg({name: value}); -1 / 0 mean onnxruntime's defaults."""

    _KEYS = ("max_mem", "arena_extend_strategy", "initial_chunk_size_bytes", "max_dead_bytes_per_chunk",
             "initial_growth_chunk_size_bytes", "max_power_of_two_extend_bytes")

    def __init__(self, *args):
        self.max_mem, self.arena_extend_strategy, self.initial_chunk_size_bytes = 0, -1, -1
        self.max_dead_bytes_per_chunk, self.initial_growth_chunk_size_bytes = -1, -1
        self.max_power_of_two_extend_bytes = -1
        if len(args) == 1 and isinstance(args[0], dict):
            for key, value in args[0].items():
                if key not in self._KEYS:
                    raise RuntimeError(f"Invalid OrtArenaCfg option: {key}")
                setattr(self, key, int(value))
        elif len(args) == 4:
            (self.max_mem, self.arena_extend_strategy, self.initial_chunk_size_bytes,
             self.max_dead_bytes_per_chunk) = (int(a) for a in args)
        else:
            raise TypeError("OrtArenaCfg takes (max_mem, arena_extend_strategy, initial_chunk_size_bytes, "
                            "max_dead_bytes_per_chunk) or a dict")


def create_and_register_allocator(memory_info, arena_cfg):
    """Accepted for onnxruntime compatibility (a shared allocator for sessions that ask for it): nxrt's sessions
    allocate from their own run arena."""
    if not isinstance(memory_info, OrtMemoryInfo):
        raise TypeError("create_and_register_allocator takes an OrtMemoryInfo")


def create_and_register_allocator_v2(provider_type, memory_info, provider_options, arena_cfg):
    create_and_register_allocator(memory_info, arena_cfg)
