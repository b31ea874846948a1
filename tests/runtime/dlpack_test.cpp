// DLPack interop on the CPU backend: from_dlpack borrows a producer's memory and runs its deleter
// exactly once, when the last Tessera handle (copy, view, pending launch) is gone; it refuses what
// Tessera cannot hold safely, leaving the DLManagedTensor the caller's; to_dlpack exports a view
// that keeps Tessera's storage alive and counts as a handle while the consumer holds it.
#include <dlpack/dlpack.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <tessera/tessera.hpp>

#include "runtime/expect_error.hpp"

namespace tessera::test {
namespace {

using namespace tessera::tile;

TESSERA_KERNEL(dl_add, Out<float> z, In<float> x, In<float> y) {
  z.store(load_like(x, z) + load_like(y, z));
};
TESSERA_KERNEL(dl_copy, Out<float> z, In<float> x) {
  z.store(load_like(x, z));
};

// A producer's tensor, as another library would lend it: its own buffer, shape and strides, and
// a deleter that counts its calls (the buffer outlives the DLManagedTensor, so the test can read
// what a kernel wrote and how often the deleter ran).
template <class T>
struct Producer {
  std::vector<T> buffer;
  std::vector<int64_t> shape, strides;
  int deleted = 0;
  DLManagedTensor managed{};

  Producer(std::vector<T> values, std::vector<int64_t> shape_, std::vector<int64_t> strides_,
           DLDataType type)
      : buffer(std::move(values)), shape(std::move(shape_)), strides(std::move(strides_)) {
    DLTensor& t = managed.dl_tensor;
    t.data = buffer.data();
    t.device = {kDLCPU, 0};
    t.ndim = static_cast<int>(shape.size());
    t.dtype = type;
    t.shape = shape.data();
    t.strides = strides.empty() ? nullptr : strides.data();
    t.byte_offset = 0;
    managed.manager_ctx = this;
    managed.deleter = [](DLManagedTensor* self) {
      ++static_cast<Producer*>(self->manager_ctx)->deleted;
    };
  }
};

constexpr DLDataType kF32{kDLFloat, 32, 1};

std::vector<float> iota(int n, float from = 0.0f) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) v[static_cast<size_t>(i)] = from + static_cast<float>(i);
  return v;
}

TEST(FromDLPack, ReadsTheProducersMemoryWithoutACopy) {
  Producer<float> p(iota(12), {3, 4}, {}, kF32);
  Tensor<float, 2> t = from_dlpack<float, 2>(&p.managed);
  EXPECT_EQ(t.shape(), (Shape{3, 4}));
  EXPECT_EQ(t.device(), Device::cpu());
  EXPECT_EQ(t.handle().address(), reinterpret_cast<uintptr_t>(p.buffer.data()));
  EXPECT_EQ(t.to_vector(), iota(12));
  p.buffer[5] = 100.0f;  // the same memory, not a copy
  EXPECT_EQ(t.to_vector()[5], 100.0f);
}

TEST(FromDLPack, RunsTheDeleterOnceWhenTheLastHandleIsGone) {
  Producer<float> p(iota(16), {16}, {}, kF32);
  {
    Tensor<float> t = from_dlpack<float>(&p.managed);
    Tensor<float> copy_of_t = t;
    Tensor<float> view = t.slice(0, 4, 8);
    t = Tensor<float>();
    copy_of_t = Tensor<float>();
    EXPECT_EQ(p.deleted, 0);  // the view still reads the memory
    EXPECT_EQ(view.to_vector(), iota(4, 4.0f));
  }
  EXPECT_EQ(p.deleted, 1);
}

TEST(FromDLPack, APendingLaunchKeepsTheProducersMemory) {
  Producer<float> p(iota(16), {16}, {}, kF32);
  auto x = from_dlpack<float, 1>(&p.managed);
  auto future = dl_copy(zeros<float>({16}, Device::cpu()).partition({8}), x);
  x = Tensor<float, 1>();  // the caller lets go; the launch still reads it
  EXPECT_EQ(p.deleted, 0);
  auto [z, in] = std::move(future).sync();
  EXPECT_EQ(p.deleted, 0);  // sync() handed the input back
  in = Tensor<float, 1>();
  EXPECT_EQ(p.deleted, 1);
  EXPECT_EQ(std::move(z).unpartition().to_vector(), iota(16));
}

// With a stream (a producer that reuses memory in a stream's order): on the CPU a stream is only a
// name, so the rules are the plain ones: a chained launch keeps the memory, and the deleter runs
// once that launch is done and the last handle gone.
TEST(FromDLPack, WithAStreamOnTheCpuTheDeleterStillFollowsThePendingLaunch) {
  Producer<float> p(iota(16), {16}, {}, kF32);
  const Stream cpu_stream(Device::cpu());
  {
    auto x = from_dlpack_unchecked<float, 1>(&p.managed, cpu_stream);
    auto [z, x1] = dl_copy(zeros<float>({16}, Device::cpu()).partition({8}), std::move(x)).chain();
    x1 = Tensor<float, 1>();  // the launch may still read it: the memory stays lent
    EXPECT_EQ(std::move(z).unpartition().to_vector(), iota(16));
  }
  EXPECT_EQ(p.deleted, 1);
  // And an export for a consumer's stream describes the same elements.
  auto t = arange<float>(5, Device::cpu());
  DLManagedTensor* m = to_dlpack(t, cpu_stream);
  EXPECT_EQ(static_cast<const float*>(m->dl_tensor.data)[4], 4.0f);
  m->deleter(m);
}

TEST(FromDLPack, AKernelWritesIntoABorrowedOutput) {
  Producer<float> out(std::vector<float>(10, -1.0f), {10}, {}, kF32);
  Producer<float> a(iota(10), {10}, {}, kF32);
  Producer<float> b(iota(10, 100.0f), {10}, {}, kF32);
  auto z = from_dlpack<float, 1>(&out.managed).partition({4});  // the only handle on our side
  auto [z1, x1, y1] =
      dl_add(std::move(z), from_dlpack<float, 1>(&a.managed), from_dlpack<float, 1>(&b.managed))
          .sync();
  for (int i = 0; i < 10; ++i) EXPECT_EQ(out.buffer[static_cast<size_t>(i)], 100.0f + 2.0f * i);
  EXPECT_EQ(out.deleted, 0);
}

TEST(FromDLPack, StridedLayoutsAreViewedInPlace) {
  // A 3x2 transpose of a row-major 2x3 buffer: element [i, j] is buffer[j * 3 + i].
  Producer<float> p(iota(6), {3, 2}, {1, 3}, kF32);
  auto t = from_dlpack<float, 2>(&p.managed);
  EXPECT_EQ(t.handle().strides(), (Shape{1, 3}));
  EXPECT_EQ(t.to_vector(), (std::vector<float>{0, 3, 1, 4, 2, 5}));
}

TEST(FromDLPack, ByteOffsetIsHonoured) {
  Producer<float> p(iota(8), {4}, {}, kF32);
  p.managed.dl_tensor.byte_offset = 4 * sizeof(float);
  EXPECT_EQ(from_dlpack<float>(&p.managed).to_vector(), iota(4, 4.0f));
}

// Refusals: each leaves the DLManagedTensor untouched and the caller's (the deleter does not run),
// and its twin, the same tensor asked for correctly, imports.
TEST(FromDLPack, AWrongElementTypeIsRefusedNamingTheTypeToAskFor) {
  Producer<float> p(iota(4), {4}, {}, kF32);
  const std::string m = error_of<UsageError>([&] { (void)from_dlpack<half>(&p.managed); });
  EXPECT_EQ(after_location(m),
            "from_dlpack<half>: the DLPack tensor holds f32 elements, not f16; ask for "
            "from_dlpack<float>, or convert it on the producer's side");
  EXPECT_NE(file_and_line(m), "");  // the caller's line
  EXPECT_EQ(p.deleted, 0);
  EXPECT_EQ(from_dlpack<float>(&p.managed).to_vector(), iota(4));
}

TEST(FromDLPack, AnElementTypeTesseraLacksIsRefused) {
  Producer<float> p(iota(4), {2}, {}, DLDataType{5 /* complex */, 64, 1});
  EXPECT_EQ(after_location(error_of<UsageError>([&] { (void)from_dlpack<float>(&p.managed); })),
            "from_dlpack<float>: the DLPack tensor holds DLPack type code 5 of 64 bits and 1 "
            "lanes elements, not f32; convert it on the producer's side to a type Tessera has "
            "(bool, int8-int64, uint8, float16, bfloat16, float32, float64, float8_e4m3fn, "
            "float8_e5m2)");
  EXPECT_EQ(p.deleted, 0);
}

TEST(FromDLPack, VectorLanesAreRefused) {
  Producer<float> p(iota(8), {4}, {}, DLDataType{kDLFloat, 32, 2});
  EXPECT_EQ(after_location(error_of<UsageError>([&] { (void)from_dlpack<float>(&p.managed); })),
            "from_dlpack<float>: the DLPack tensor holds DLPack type code 2 of 32 bits and 2 "
            "lanes elements, not f32; convert it on the producer's side to a type Tessera has "
            "(bool, int8-int64, uint8, float16, bfloat16, float32, float64, float8_e4m3fn, "
            "float8_e5m2)");
}

TEST(FromDLPack, AWrongRankIsRefused) {
  Producer<float> p(iota(12), {3, 4}, {}, kF32);
  EXPECT_EQ(after_location(error_of<UsageError>([&] { (void)from_dlpack<float, 1>(&p.managed); })),
            "from_dlpack<float, 1>: the DLPack tensor has rank 2; ask for from_dlpack<float, 2> or "
            "leave the rank out");
  EXPECT_EQ(p.deleted, 0);
  EXPECT_EQ(from_dlpack<float>(&p.managed).rank(), 2);
}

TEST(FromDLPack, ABroadcastLayoutIsRefusedSinceAnOutputThereWouldRace) {
  // A zero stride (torch's expand()): four indices name one element.
  Producer<float> p(iota(3), {4, 3}, {0, 1}, kF32);
  EXPECT_EQ(after_location(error_of<UsageError>([&] { (void)from_dlpack<float>(&p.managed); })),
            "from_dlpack<float>: the DLPack tensor's strides [0, 1] for shape [4, 3] reach one "
            "element from two indices (or step backwards); Tessera takes layouts whose elements "
            "are distinct, since an output there would race: make it contiguous on the "
            "producer's side first (torch: .contiguous())");
  EXPECT_EQ(p.deleted, 0);
  // Overlapping rows (stride 2 for rows of 3) are refused the same way; an extent-1 axis with a
  // zero stride touches nothing twice and imports.
  Producer<float> rows(iota(8), {3, 3}, {2, 1}, kF32);
  EXPECT_THROW((void)from_dlpack<float>(&rows.managed), UsageError);
  Producer<float> single(iota(3), {1, 3}, {0, 1}, kF32);
  EXPECT_EQ(from_dlpack<float>(&single.managed).to_vector(), iota(3));
}

TEST(FromDLPack, ADeviceTesseraDoesNotRunOnIsRefused) {
  Producer<float> p(iota(4), {4}, {}, kF32);
  p.managed.dl_tensor.device = {kDLOpenCL, 0};
  EXPECT_EQ(after_location(error_of<UsageError>([&] { (void)from_dlpack<float>(&p.managed); })),
            "from_dlpack<float>: the DLPack tensor lives on device type 4 (id 0), where Tessera "
            "does not run; Tessera takes CPU memory (kDLCPU, kDLCUDAHost) and CUDA device memory "
            "(kDLCUDA): copy it there first");
  EXPECT_EQ(p.deleted, 0);
}

TEST(FromDLPack, ANullTensorIsRefused) {
  EXPECT_EQ(after_location(error_of<UsageError>([&] { (void)from_dlpack<float>(nullptr); })),
            "from_dlpack<float>: the DLManagedTensor pointer is null; pass the one the producer "
            "made (e.g. the capsule of x.__dlpack__())");
}

// Ownership rules hold for borrowed memory: two imports of one buffer are two storages, so the
// launcher's address check is what refuses an output that is also an input.
TEST(FromDLPack, OneBufferImportedAsOutputAndInputIsRefusedAtLaunch) {
  Producer<float> p(iota(16), {16}, {}, kF32);
  Producer<float> again(std::vector<float>(), {16}, {}, kF32);
  again.managed.dl_tensor.data = p.buffer.data();  // a second export of the same memory
  auto z = from_dlpack<float, 1>(&p.managed).partition({8});
  auto x = from_dlpack<float, 1>(&again.managed);
  EXPECT_EQ(after_location(error_of<OwnershipError>([&] { (void)dl_copy(std::move(z), x); })),
            "kernel 'dl_copy': argument 1 ('z', Out) overlaps argument 2 ('x', In) in memory; an "
            "output may not be reachable through another argument, or tiles would race with "
            "reads of it");
  // The twin: a separate buffer as the input launches.
  Producer<float> other(iota(16, 50.0f), {16}, {}, kF32);
  auto [z1, x1] = dl_copy(std::move(z), from_dlpack<float, 1>(&other.managed)).sync();
  EXPECT_EQ(p.buffer, iota(16, 50.0f));
}

TEST(FromDLPack, APartitionNeedsTheOnlyHandleOnTesserasSide) {
  Producer<float> p(iota(16), {16}, {}, kF32);
  auto t = from_dlpack<float, 1>(&p.managed);
  auto reader = t;
  EXPECT_EQ(after_location(error_of<OwnershipError>([&] { (void)std::move(t).partition({8}); })),
            "partition() needs the only handle to the tensor's storage, but 2 handles share it "
            "(copies, views, or launches still reading it); drop the other handles, or sync the "
            "launches, first");
  reader = Tensor<float, 1>();
  EXPECT_NO_THROW((void)std::move(t).partition({8}));
}

TEST(FromDLPack, EveryTesseraDTypeImportsFromItsDLPackType) {
  Producer<int64_t> i64(std::vector<int64_t>{1, -2}, {2}, {}, DLDataType{kDLInt, 64, 1});
  EXPECT_EQ(from_dlpack<int64_t>(&i64.managed).to_vector(), (std::vector<int64_t>{1, -2}));
  Producer<uint8_t> u8(std::vector<uint8_t>{7, 255}, {2}, {}, DLDataType{kDLUInt, 8, 1});
  EXPECT_EQ(from_dlpack<uint8_t>(&u8.managed).to_vector(), (std::vector<uint8_t>{7, 255}));
  Producer<uint8_t> flags(std::vector<uint8_t>{1, 0}, {2}, {}, DLDataType{6 /* kDLBool */, 8, 1});
  EXPECT_EQ(from_dlpack<bool>(&flags.managed).dtype(), DType::Bool);
  Producer<uint16_t> bf(std::vector<uint16_t>{0x3f80}, {1}, {}, DLDataType{kDLBfloat, 16, 1});
  EXPECT_EQ(static_cast<float>(from_dlpack<bfloat16>(&bf.managed).to_vector()[0]), 1.0f);
  Producer<uint16_t> f16(std::vector<uint16_t>{0x3c00}, {1}, {}, DLDataType{kDLFloat, 16, 1});
  EXPECT_EQ(static_cast<float>(from_dlpack<half>(&f16.managed).to_vector()[0]), 1.0f);
  // DLPack 1.1's fp8 codes: kDLFloat8_e4m3fn = 10, kDLFloat8_e5m2 = 12 (PyTorch sends them).
  Producer<uint8_t> e4(std::vector<uint8_t>{0x38, 0x7e}, {2}, {}, DLDataType{10, 8, 1});
  const auto e4v = from_dlpack<float8_e4m3>(&e4.managed).to_vector();
  EXPECT_EQ(static_cast<float>(e4v[0]), 1.0f);
  EXPECT_EQ(static_cast<float>(e4v[1]), 448.0f);
  Producer<uint8_t> e5(std::vector<uint8_t>{0x3c}, {1}, {}, DLDataType{12, 8, 1});
  EXPECT_EQ(static_cast<float>(from_dlpack<float8_e5m2>(&e5.managed).to_vector()[0]), 1.0f);
}

TEST(ToDLPack, DescribesTheTensorsElementsInPlace) {
  auto t = from_host(iota(12), {3, 4}, Device::cpu());
  auto view = t.slice(1, 1, 3);  // columns 1 and 2: strides [4, 1], offset 1
  DLManagedTensor* m = to_dlpack(view);
  const DLTensor& d = m->dl_tensor;
  EXPECT_EQ(d.device.device_type, kDLCPU);
  EXPECT_EQ(d.ndim, 2);
  EXPECT_EQ(d.dtype.code, kDLFloat);
  EXPECT_EQ(d.dtype.bits, 32);
  EXPECT_EQ(d.dtype.lanes, 1);
  EXPECT_EQ((std::vector<int64_t>(d.shape, d.shape + 2)), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ((std::vector<int64_t>(d.strides, d.strides + 2)), (std::vector<int64_t>{4, 1}));
  const float* data = static_cast<const float*>(d.data) + d.byte_offset / sizeof(float);
  EXPECT_EQ(data[0], 1.0f);
  EXPECT_EQ(data[4 + 1], 6.0f);
  m->deleter(m);
}

TEST(ToDLPack, TheExportKeepsTheStorageAndCountsAsAHandle) {
  auto t = from_host(iota(8), {8}, Device::cpu());
  DLManagedTensor* m = to_dlpack(t);
  EXPECT_EQ(t.handle().use_count(), 2);
  // The consumer may write through the export, so the storage cannot be partitioned meanwhile.
  EXPECT_EQ(after_location(error_of<OwnershipError>([&] { (void)std::move(t).partition({4}); })),
            "partition() needs the only handle to the tensor's storage, but 2 handles share it "
            "(copies, views, or launches still reading it); drop the other handles, or sync the "
            "launches, first");
  t = Tensor<float, 1>();  // Tessera lets go; the export alone keeps the memory
  EXPECT_EQ(static_cast<const float*>(m->dl_tensor.data)[7], 7.0f);
  m->deleter(m);
}

TEST(ToDLPack, ThePartitionIsAllowedOnceTheConsumerLetsGo) {
  auto t = from_host(iota(8), {8}, Device::cpu());
  DLManagedTensor* m = to_dlpack(t);
  m->deleter(m);
  EXPECT_EQ(t.handle().use_count(), 1);
  EXPECT_NO_THROW((void)std::move(t).partition({4}));
}

TEST(ToDLPack, AMovedFromTensorIsRefused) {
  auto t = from_host(iota(8), {8}, Device::cpu());
  auto kept = std::move(t);
  // NOLINTNEXTLINE(bugprone-use-after-move): the test uses it on purpose
  const std::string m = error_of<OwnershipError>([&] { (void)to_dlpack(t); });
  EXPECT_EQ(after_location(m),
            "this Tensor was moved from (into partition(), unpartition() or a launch) and no "
            "longer owns anything; use the handle that operation returned");
  DLManagedTensor* lent = to_dlpack(kept);  // the twin: the live handle exports
  lent->deleter(lent);
}

TEST(ToDLPack, ARoundTripSharesTheStorageAndReleasesItOnce) {
  auto t = from_host(iota(6), {2, 3}, Device::cpu());
  const uintptr_t address = t.handle().address();
  auto back = from_dlpack<float, 2>(to_dlpack(t));
  EXPECT_EQ(back.handle().address(), address);
  EXPECT_EQ(t.handle().use_count(), 2);  // the export, now held by `back`
  back = Tensor<float, 2>();             // runs the export's deleter
  EXPECT_EQ(t.handle().use_count(), 1);
}

// Tessera's own export, imported back, is the same storage, so both sides' handles are counted
// together: the round trip is no way around the partition rule.
TEST(ToDLPack, ARoundTripCannotPartitionMemoryTheSourceStillHolds) {
  auto t = from_host(iota(8), {8}, Device::cpu());
  auto back = from_dlpack<float, 1>(to_dlpack(t));
  EXPECT_EQ(back.handle().storage(), t.handle().storage());
  EXPECT_EQ(after_location(error_of<OwnershipError>([&] { (void)std::move(back).partition({4}); })),
            "partition() needs the only handle to the tensor's storage, but 2 handles share it "
            "(copies, views, or launches still reading it); drop the other handles, or sync the "
            "launches, first");
  // The twin: once the source lets go, the imported handle is the only one.
  t = Tensor<float, 1>();
  EXPECT_NO_THROW((void)std::move(back).partition({4}));
}

TEST(ToDLPack, EveryDTypeExportsAsItsDLPackType) {
  auto check = [](auto t, uint8_t code, uint8_t bits) {
    DLManagedTensor* m = to_dlpack(t);
    EXPECT_EQ(m->dl_tensor.dtype.code, code);
    EXPECT_EQ(m->dl_tensor.dtype.bits, bits);
    m->deleter(m);
  };
  check(zeros<bool>({2}, Device::cpu()), 6, 8);
  check(zeros<int8_t>({2}, Device::cpu()), kDLInt, 8);
  check(zeros<int32_t>({2}, Device::cpu()), kDLInt, 32);
  check(zeros<uint8_t>({2}, Device::cpu()), kDLUInt, 8);
  check(zeros<half>({2}, Device::cpu()), kDLFloat, 16);
  check(zeros<bfloat16>({2}, Device::cpu()), kDLBfloat, 16);
  check(zeros<double>({2}, Device::cpu()), kDLFloat, 64);
  check(zeros<float8_e4m3>({2}, Device::cpu()), 10, 8);
  check(zeros<float8_e5m2>({2}, Device::cpu()), 12, 8);
}

}  // namespace
}  // namespace tessera::test
