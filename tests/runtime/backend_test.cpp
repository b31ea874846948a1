// The backend interface (tessera/backend/backend.hpp): the runtime compiles a launch's kernel
// through the backend of its device, never by branching on the device itself. A test backend put
// in the CPU's place sees what the runtime asks of it.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include <tessera/backend/backend.hpp>
#include <tessera/backend/cpu/backend.hpp>
#include <tessera/tessera.hpp>

namespace tessera::test {
namespace {

using namespace tessera::tile;

TESSERA_KERNEL(backend_double, Out<float> z, In<float> x) {
  z.store(load_like(x, z) * 2.0f);
};
TESSERA_KERNEL(backend_triple, Out<float, 2> z, In<float, 2> x, Scalar<float> s) {
  z.store(load_like(x, z) * 3.0f + s);
};

// Records each compile, then lets the CPU backend do it (the interpreter runs the IR).
class RecordingBackend final : public backend::Backend {
 public:
  explicit RecordingBackend(bool specializes) : specializes_(specializes) {}
  std::string_view name() const override { return "recording"; }
  bool specializes_on_tensors() const override { return specializes_; }
  backend::Loaded compile(const backend::KernelToCompile& k) const override {
    seen.push_back({std::string(k.name), k.fn.name, k.device,
                    std::vector<backend::cuda::TensorSpec>(k.tensors.begin(), k.tensors.end())});
    return backend::cpu::backend().compile(k);
  }
  void check_launch(const backend::Loaded& loaded, const backend::LaunchArgs& args) const override {
    EXPECT_EQ(loaded.gpu, nullptr);  // the CPU's compile loads nothing
    checked_grids.push_back(args.grid);
  }
  std::shared_ptr<runtime::Completion> start(backend::LaunchToStart&& l) const override {
    started.push_back(
        {l.fn ? l.fn->name : "", l.label ? *l.label : "", l.args.grid, l.writers.size()});
    return backend::cpu::backend().start(std::move(l));
  }
  struct Seen {
    std::string name, fn_name;
    Device device;
    std::vector<backend::cuda::TensorSpec> tensors;
  };
  mutable std::vector<Seen> seen;
  mutable std::vector<Shape> checked_grids;  // one per launch
  struct Started {
    std::string fn_name, label;
    Shape grid;
    size_t writers = 0;
  };
  mutable std::vector<Started> started;  // one per launch

 private:
  bool specializes_;
};

// Puts `b` in the CPU backend's place for the scope.
class CpuBackendReplaced {
 public:
  explicit CpuBackendReplaced(const backend::Backend& b) {
    backend::register_backend(DeviceKind::CPU, b);
  }
  ~CpuBackendReplaced() { backend::register_backend(DeviceKind::CPU, backend::cpu::backend()); }
  CpuBackendReplaced(const CpuBackendReplaced&) = delete;
  CpuBackendReplaced& operator=(const CpuBackendReplaced&) = delete;
};

TEST(Backends, TheCpuOneIsAlwaysThereAndTesseraLinksTheCudaOne) {
  const backend::Backend& cpu = backend::backend_for(DeviceKind::CPU);
  EXPECT_EQ(cpu.name(), "cpu");
  EXPECT_FALSE(cpu.specializes_on_tensors());
  EXPECT_EQ(&cpu, &backend::cpu::backend());
  // Registered by tessera_cuda_backend, which nothing here references: the link option of
  // Tessera::tessera keeps it.
  const backend::Backend& cuda = backend::backend_for(DeviceKind::CUDA);
  EXPECT_EQ(cuda.name(), "cuda");
  EXPECT_TRUE(cuda.specializes_on_tensors());
  const std::vector<const backend::Backend*> all = backend::registered_backends();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0], &cpu);
  EXPECT_EQ(all[1], &cuda);
}

TEST(Backends, ALaunchCompilesThroughTheBackendOfItsDeviceOnceAndIsCheckedByItEachTime) {
  const RecordingBackend recorder(false);
  const CpuBackendReplaced replaced(recorder);
  for (int round = 0; round < 2; ++round) {
    auto [z, x] = backend_double(zeros<float>({40}, Device::cpu()).partition({16}),
                                 arange<float>(40, Device::cpu()))
                      .sync();
    const std::vector<float> v = std::move(z).unpartition().to_vector();
    for (int i = 0; i < 40; ++i) ASSERT_EQ(v[i], 2.0f * static_cast<float>(i)) << i;
  }
  ASSERT_EQ(recorder.seen.size(), 1u);  // the second launch found the specialization cached
  EXPECT_EQ(recorder.seen[0].name, "backend_double");
  EXPECT_EQ(recorder.seen[0].fn_name, "backend_double");
  EXPECT_EQ(recorder.seen[0].device, Device::cpu());
  EXPECT_TRUE(recorder.seen[0].tensors.empty());  // it does not specialize on them
  // Every launch, cached or not, is checked against the device by its backend.
  EXPECT_EQ(recorder.checked_grids, (std::vector<Shape>{Shape{3}, Shape{3}}));
}

// CheckedLaunch::start asks the device's backend to queue the launch (no branch on the device in
// the runtime), handing it the IR, the arguments and the launches it must follow.
TEST(Backends, ALaunchIsStartedByTheBackendOfItsDevice) {
  const RecordingBackend recorder(false);
  const CpuBackendReplaced replaced(recorder);
  auto x = arange<float>(40, Device::cpu());
  auto [h, x1] = backend_double(zeros<float>({40}, Device::cpu()).partition({16}), x).chain();
  Tensor<float, 1> ht = std::move(h).unpartition();
  // Reads what the first launch writes: queued after it (as a writer it follows, if still
  // pending when this one starts).
  auto [z, h1] = backend_double(zeros<float>({40}, Device::cpu()).partition({16}), ht).chain();
  const std::vector<float> v = std::move(z).unpartition().to_vector();
  for (int i = 0; i < 40; ++i) ASSERT_EQ(v[i], 4.0f * static_cast<float>(i)) << i;
  ASSERT_EQ(recorder.started.size(), 2u);
  for (const RecordingBackend::Started& s : recorder.started) {
    EXPECT_EQ(s.fn_name, "backend_double");
    EXPECT_EQ(s.grid, Shape{3});
    EXPECT_FALSE(s.label.empty());
  }
  EXPECT_EQ(recorder.started[0].writers, 0u);  // nothing before it touches its memory
  EXPECT_LE(recorder.started[1].writers, 1u);
}

TEST(Backends, ABackendThatSpecializesOnTensorsGetsEachArgumentsAlignmentClass) {
  const RecordingBackend recorder(true);
  const CpuBackendReplaced replaced(recorder);
  std::vector<float> host(64);
  for (int i = 0; i < 64; ++i) host[i] = static_cast<float>(i);
  auto x = from_host<float>(host, {8, 8}, Device::cpu());
  auto [z, unused, scale] =
      backend_triple(zeros<float>({8, 8}, Device::cpu()).partition({4, 4}), x, 1.0f).sync();
  const std::vector<float> v = std::move(z).unpartition().to_vector();
  for (int i = 0; i < 64; ++i) ASSERT_EQ(v[i], 3.0f * static_cast<float>(i) + 1.0f) << i;
  ASSERT_EQ(recorder.seen.size(), 1u);
  const std::vector<backend::cuda::TensorSpec>& t = recorder.seen[0].tensors;
  ASSERT_EQ(t.size(), 3u);  // one per parameter, the scalar's unused
  for (int i = 0; i < 2; ++i) {
    EXPECT_TRUE(t[i].inner_unit_stride) << i;
    EXPECT_TRUE(t[i].inner_extent_aligned) << i;  // rows of 32 bytes
    EXPECT_GE(t[i].vector_bytes, 16) << i;
  }
}

}  // namespace
}  // namespace tessera::test
