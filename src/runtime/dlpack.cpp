// DLPack import and export (tessera/runtime/dlpack.hpp): checks a lent DLTensor against what the
// caller asked for and Tessera's rules, then wraps it in a handle that owns it; exports a handle
// as a DLManagedTensor that holds a copy of it.
#include "tessera/runtime/dlpack.hpp"

#if TESSERA_HAS_DLPACK

#include <dlpack/dlpack.h>

#include <algorithm>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gpu_streams.hpp"
#include "handle_internals.hpp"
#include "pending_access.hpp"
#include "tessera/core/checked.hpp"
#include "tessera/runtime/gpu.hpp"

namespace tessera::runtime {

namespace {

// DLPack 0.8 added a type code for bool (kDLBool); Debian's header is 0.6, which lacks the name.
// Producers of today (PyTorch, NumPy) send bool tensors with it.
constexpr uint8_t kBoolCode = 6;
// DLPack 1.1 added fp8 codes (kDLFloat8_e4m3fn, kDLFloat8_e5m2); PyTorch sends them.
constexpr uint8_t kFloat8E4M3FnCode = 10;
constexpr uint8_t kFloat8E5M2Code = 12;

DLDataType dl_type_of(DType t) {
  const auto bits = static_cast<uint8_t>(dtype_size(t) * 8);
  switch (t) {
    case DType::Bool:
      return {kBoolCode, bits, 1};
    case DType::I8:
    case DType::I16:
    case DType::I32:
    case DType::I64:
      return {kDLInt, bits, 1};
    case DType::U8:
      return {kDLUInt, bits, 1};
    case DType::F16:
    case DType::F32:
    case DType::F64:
      return {kDLFloat, bits, 1};
    case DType::BF16:
      return {kDLBfloat, bits, 1};
    case DType::F8E4M3:
      return {kFloat8E4M3FnCode, bits, 1};
    case DType::F8E5M2:
      return {kFloat8E5M2Code, bits, 1};
  }
  return {kDLOpaqueHandle, 0, 0};
}

// The Tessera dtype of a DLPack element type, if there is one.
std::optional<DType> dtype_of_dl(DLDataType t) {
  if (t.lanes != 1) return std::nullopt;
  for (DType d : {DType::Bool, DType::I8, DType::I16, DType::I32, DType::I64, DType::U8, DType::F16,
                  DType::BF16, DType::F32, DType::F64, DType::F8E4M3, DType::F8E5M2}) {
    const DLDataType m = dl_type_of(d);
    if (m.code == t.code && m.bits == t.bits) return d;
  }
  return std::nullopt;
}

// What users write for a dtype in from_dlpack<...>.
std::string_view cpp_name(DType t) {
  switch (t) {
    case DType::Bool:
      return "bool";
    case DType::I8:
      return "int8_t";
    case DType::I16:
      return "int16_t";
    case DType::I32:
      return "int32_t";
    case DType::I64:
      return "int64_t";
    case DType::U8:
      return "uint8_t";
    case DType::F16:
      return "half";
    case DType::BF16:
      return "bfloat16";
    case DType::F32:
      return "float";
    case DType::F64:
      return "double";
    case DType::F8E4M3:
      return "float8_e4m3";
    case DType::F8E5M2:
      return "float8_e5m2";
  }
  return "?";
}

std::string describe(DLDataType t) {
  if (std::optional<DType> d = dtype_of_dl(t)) return std::string(dtype_name(*d));
  return detail::cat("DLPack type code ", int{t.code}, " of ", int{t.bits}, " bits and ", t.lanes,
                     " lanes");
}

std::string request(DType dtype, int rank) {
  if (rank == kDynamicRank) return detail::cat("from_dlpack<", cpp_name(dtype), ">");
  return detail::cat("from_dlpack<", cpp_name(dtype), ", ", rank, ">");
}

// The Tessera device of a DLPack device, if Tessera runs there. Pinned host memory is host memory.
// (Not a switch: DLPack's list of device types grows with each version.)
std::optional<Device> device_of_dl(DLDevice d) {
  if (d.device_type == kDLCPU || d.device_type == kDLCUDAHost) return Device::cpu();
  if (d.device_type == kDLCUDA) return Device::cuda(d.device_id);
  return std::nullopt;
}

// True when no two indices of `shape` reach the same element through `strides` (non-negative):
// sorted by stride, each axis that moves must step past everything the axes before it reach.
// (A few exotic interleaved layouts that do not overlap fail this too; they are refused.)
bool strides_never_alias(const Shape& shape, const Shape& strides) {
  std::vector<size_t> axes;
  for (size_t d = 0; d < shape.size(); ++d)
    if (shape[d] > 1) axes.push_back(d);
  std::sort(axes.begin(), axes.end(), [&](size_t a, size_t b) { return strides[a] < strides[b]; });
  int64_t reach = 1;  // elements spanned by the axes so far
  for (size_t d : axes) {
    if (strides[d] < reach) return false;
    const std::optional<int64_t> next = checked_mul(strides[d], shape[d]);
    if (!next) return false;
    reach = *next;
  }
  return true;
}

struct Exported {
  DLManagedTensor managed{};
  TensorHandle keep;  // the export's handle to the storage
  std::vector<int64_t> shape, strides;
};

void release_export(DLManagedTensor* self) {
  delete static_cast<Exported*>(self->manager_ctx);
}

}  // namespace

TensorHandle handle_from_dlpack(DLManagedTensor* managed, DType dtype, int rank, SourceLoc loc,
                                const Stream* stream) {
  if (managed == nullptr)
    fail_at<UsageError>(loc, request(dtype, rank),
                        ": the DLManagedTensor pointer is null; pass the one the producer made "
                        "(e.g. the capsule of x.__dlpack__())");
  const DLTensor& t = managed->dl_tensor;
  const std::optional<DType> held = dtype_of_dl(t.dtype);
  if (held != dtype)
    fail_at<UsageError>(
        loc, request(dtype, rank), ": the DLPack tensor holds ", describe(t.dtype),
        " elements, not ", dtype_name(dtype), "; ",
        held ? detail::cat("ask for from_dlpack<", cpp_name(*held),
                           ">, or convert it on the "
                           "producer's side")
             : std::string("convert it on the producer's side to a type Tessera has (bool, "
                           "int8-int64, uint8, float16, bfloat16, float32, float64, float8_e4m3fn, "
                           "float8_e5m2)"));
  if (t.ndim < 0 || (rank != kDynamicRank && t.ndim != rank))
    fail_at<UsageError>(loc, request(dtype, rank), ": the DLPack tensor has rank ", t.ndim,
                        "; ask for from_dlpack<", cpp_name(dtype), ", ", t.ndim,
                        "> or leave the rank out");
  const std::optional<Device> device = device_of_dl(t.device);
  if (!device)
    fail_at<UsageError>(loc, request(dtype, rank), ": the DLPack tensor lives on device type ",
                        static_cast<int>(t.device.device_type), " (id ", t.device.device_id,
                        "), where Tessera does not run; Tessera takes CPU memory (kDLCPU, "
                        "kDLCUDAHost) and CUDA device memory (kDLCUDA): copy it there first");
  Shape shape(t.shape, t.shape + t.ndim);
  for (int64_t e : shape)
    if (e < 0)
      fail_at<UsageError>(loc, request(dtype, rank), ": the DLPack tensor's shape ",
                          to_string(shape), " has a negative extent");
  int64_t count = 0;
  try {
    count = numel(shape);
  } catch (const UsageError& e) {
    fail_at<UsageError>(loc, request(dtype, rank), ": ", e.what());
  }
  Shape strides = t.strides ? Shape(t.strides, t.strides + t.ndim) : row_major_strides(shape);
  if (std::any_of(strides.begin(), strides.end(), [](int64_t s) { return s < 0; }) ||
      !strides_never_alias(shape, strides))
    fail_at<UsageError>(loc, request(dtype, rank), ": the DLPack tensor's strides ",
                        to_string(strides), " for shape ", to_string(shape),
                        " reach one element from two indices (or step backwards); Tessera takes "
                        "layouts whose elements are distinct, since an output there would race: "
                        "make it contiguous on the producer's side first (torch: .contiguous())");
  // The bytes the view reaches: one past its farthest element.
  int64_t last = 0;
  for (size_t d = 0; d < shape.size() && count > 0; ++d)
    last += (shape[d] - 1) * strides[d];  // fits: the strides passed strides_never_alias
  const std::optional<size_t> span =
      count == 0 ? size_t{0} : checked_mul(static_cast<size_t>(last + 1), dtype_size(dtype));
  if (!span)
    fail_at<UsageError>(loc, request(dtype, rank), ": the DLPack tensor of shape ",
                        to_string(shape), " and strides ", to_string(strides),
                        " spans more bytes than a 64-bit size holds");
  if (t.data == nullptr && count > 0)
    fail_at<UsageError>(loc, request(dtype, rank), ": the DLPack tensor of shape ",
                        to_string(shape), " has a null data pointer");
  if (managed->deleter == &release_export) {
    // Tessera's own export coming back: the same storage, so that its handles are counted
    // together (a borrowed copy would let both sides partition one memory).
    TensorHandle same = HandleInternals::copy(static_cast<Exported*>(managed->manager_ctx)->keep);
    managed->deleter(managed);
    return same;
  }
  if (stream && stream->device() != *device)
    fail_at<UsageError>(loc, request(dtype, rank), ": the DLPack tensor lives on ", device->str(),
                        " but the stream given is on ", stream->device().str(),
                        "; pass a stream of the tensor's device");
  void* base = static_cast<std::byte*>(t.data) + t.byte_offset;
  // From here on `managed` is Tessera's: its deleter runs when the last handle is gone.
  return HandleInternals::borrow(
      dtype, std::move(shape), std::move(strides), *device, base, *span,
      [managed] {
        if (managed->deleter) managed->deleter(managed);
      },
      stream && device->is_cuda() ? stream->native() : nullptr);
}

DLManagedTensor* handle_to_dlpack(const TensorHandle& h, SourceLoc loc, const Stream* stream) {
  h.check_alive(loc);
  const Device device = h.device();
  if (stream && stream->device() != device)
    fail_at<UsageError>(loc, "to_dlpack: the tensor lives on ", device.str(),
                        " but the consumer's stream is on ", stream->device().str(),
                        "; pass a stream of the tensor's device");
  if (device.is_cuda() && stream) {
    // The consumer uses the memory on `stream`: that stream waits on the device for what is
    // queued on the device's own stream (the tensor's allocation, a fill) and for the launches
    // still using the storage; the host waits for nothing.
    gpu_stream_wait_stream(device, stream->native(), gpu_device_stream(device));
    PendingAccess::order_stream_after(*h.storage(), stream->native());
  } else if (device.is_cuda()) {
    // The consumer may use the memory on any stream: what Tessera queued on it must be done.
    gpu_synchronize(device);
  }
  auto out = std::make_unique<Exported>();
  out->keep = HandleInternals::copy(h);
  out->shape = h.shape();
  out->strides = h.strides();
  DLTensor& t = out->managed.dl_tensor;
  t.data = HandleInternals::data(h);
  t.device = device.is_cuda() ? DLDevice{kDLCUDA, device.index()} : DLDevice{kDLCPU, 0};
  t.ndim = h.rank();
  t.dtype = dl_type_of(h.dtype());
  t.shape = out->shape.data();
  t.strides = out->strides.data();
  t.byte_offset = 0;
  out->managed.manager_ctx = out.get();
  out->managed.deleter = &release_export;
  return &out.release()->managed;
}

}  // namespace tessera::runtime

#endif  // TESSERA_HAS_DLPACK
