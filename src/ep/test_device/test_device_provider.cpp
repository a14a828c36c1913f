#include "ep/test_device/test_device_provider.h"

#include <atomic>
#include <cstdlib>
#include <cstring>

#include "ep/copy_kernels.h"
#include "ep/test_device/test_device_kernels.h"

namespace nxrt::ep {

namespace {

constexpr Device kTestDevice{DeviceType::kTestDevice, 0};

struct Counters {
  std::atomic<int64_t> allocations{0};
  std::atomic<int64_t> frees{0};
  std::atomic<int64_t> host_to_device{0};
  std::atomic<int64_t> device_to_host{0};
  std::atomic<int64_t> device_to_device{0};
  std::atomic<int64_t> kernel_runs{0};
  std::atomic<int64_t> streams{0};
  std::atomic<int64_t> synchronizes{0};
};

Counters& counters() {
  static Counters instance;
  return instance;
}

class TestDeviceAllocator final : public Allocator {
 public:
  void* allocate(size_t bytes) override {
    void* block = std::aligned_alloc(64, std::max<size_t>((bytes + 63) / 64 * 64, 64));
    if (block != nullptr) ++counters().allocations;
    return block;
  }
  void deallocate(void* pointer) override {
    if (pointer == nullptr) return;
    ++counters().frees;
    std::free(pointer);
  }
  Device device() const override { return kTestDevice; }
};

// Work on the test device completes when it is enqueued; the stream counts what a real one would have to order.
class TestDeviceStream final : public Stream {
 public:
  Device device() const override { return kTestDevice; }
  Status synchronize() override {
    ++counters().synchronizes;
    return Status::ok();
  }
};

class TestDeviceProvider final : public ExecutionProvider {
 public:
  TestDeviceProvider() {
    const std::span<const KernelDef> tables[] = {copy_kernels(), test_device_kernels()};
    registry_ = std::make_unique<KernelRegistry>(tables);
  }

  std::string_view name() const override { return kTestDeviceProviderName; }
  Device device() const override { return kTestDevice; }
  Allocator& allocator() const override { return allocator_; }

  Status copy(const Tensor& source, const Tensor& target, Stream* stream) const override {
    const bool from_device = source.device() == kTestDevice;
    const bool to_device = target.device() == kTestDevice;
    if ((!from_device && !is_host(source.device())) || (!to_device && !is_host(target.device()))) {
      return make_error(StatusCode::kInvalidArgument, "TestDeviceExecutionProvider cannot copy from ",
                        device_name(source.device()), " to ", device_name(target.device()));
    }
    if (source.dtype() != target.dtype() || source.numel() != target.numel() || source.dtype() == DataType::kString) {
      return make_error(StatusCode::kInvalidArgument, "TestDeviceExecutionProvider: cannot copy ",
                        tensor_type_string(source.dtype()), " of ", source.numel(), " elements into ",
                        tensor_type_string(target.dtype()), " of ", target.numel());
    }
    if (from_device && to_device) ++counters().device_to_device;
    else if (from_device) ++counters().device_to_host;
    else if (to_device) ++counters().host_to_device;
    if (source.storage_bytes() > 0 && source.raw_data() != target.raw_data()) {
      std::memmove(target.raw_data(), source.raw_data(), source.storage_bytes());
    }
    // A copy to the host has completed when it returns (the provider contract): order it after earlier work.
    if (!to_device && stream != nullptr) TRY(stream->synchronize());
    return Status::ok();
  }

  const KernelRegistry& registry() const override { return *registry_; }

  std::vector<bool> capability(const graph::Graph& graph) const override {
    std::vector<bool> takes = ExecutionProvider::capability(graph);
    for (size_t n = 0; n < graph.nodes.size(); ++n) {
      takes[n] = takes[n] && test_device_can_run(graph, graph.nodes[n]);
    }
    return takes;
  }

  std::unique_ptr<Stream> create_stream() const override {
    ++counters().streams;
    return std::make_unique<TestDeviceStream>();
  }

 private:
  mutable TestDeviceAllocator allocator_;
  std::unique_ptr<KernelRegistry> registry_;
};

}  // namespace

void count_test_device_kernel_run() { ++counters().kernel_runs; }

TestDeviceStats test_device_stats() {
  Counters& c = counters();
  return {c.allocations.load(), c.frees.load(), c.host_to_device.load(), c.device_to_host.load(),
          c.device_to_device.load(), c.kernel_runs.load(), c.streams.load(), c.synchronizes.load()};
}

void reset_test_device_stats() {
  Counters& c = counters();
  for (auto* counter : {&c.allocations, &c.frees, &c.host_to_device, &c.device_to_host, &c.device_to_device,
                        &c.kernel_runs, &c.streams, &c.synchronizes}) {
    counter->store(0);
  }
}

std::shared_ptr<const ExecutionProvider> test_device_provider() {
  static const std::shared_ptr<const ExecutionProvider> provider = std::make_shared<TestDeviceProvider>();
  return provider;
}

}  // namespace nxrt::ep
