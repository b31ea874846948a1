#include "tessera/backend/cuda/launch.hpp"

#include <algorithm>
#include <array>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string_view>

#include "tessera/backend/cuda/abi.hpp"
#include "tessera/backend/cuda/driver.hpp"
#include "tessera/core/checked.hpp"  // and <optional>
#include "tessera/core/error.hpp"

namespace tessera::backend::cuda {

namespace {

// Storage for one kernel argument, large and aligned enough for any of them.
struct alignas(16) ArgSlot {
  std::byte bytes[sizeof(TesseraTensorRef)];
};

// Arguments (the grid and each parameter) and tensor maps a launch packs without the heap.
constexpr size_t kInlineSlots = 16;
constexpr size_t kInlineMaps = 4;

template <class T>
void put(ArgSlot& slot, T value) {
  static_assert(sizeof(T) <= sizeof(ArgSlot));
  std::memcpy(slot.bytes, &value, sizeof(T));
}

// A scalar as the C type the kernel declares for it (abi.hpp).
void put_scalar(ArgSlot& slot, DType dtype, const ArgValue& v) {
  switch (dtype) {
    case DType::Bool:
      return put(slot, static_cast<bool>(v.iscalar != 0));
    case DType::I8:
      return put(slot, static_cast<int8_t>(v.iscalar));
    case DType::I16:
      return put(slot, static_cast<int16_t>(v.iscalar));
    case DType::I32:
      return put(slot, static_cast<int32_t>(v.iscalar));
    case DType::I64:
      return put(slot, static_cast<long long>(v.iscalar));
    case DType::U8:
      return put(slot, static_cast<uint8_t>(v.iscalar));
    case DType::F16:
      return put(slot, half(v.scalar).bits);
    case DType::BF16:
      return put(slot, bfloat16(v.scalar).bits);
    case DType::F32:
      return put(slot, static_cast<float>(v.scalar));
    case DType::F64:
      return put(slot, v.scalar);
    case DType::F8E4M3:
      return put(slot, float8_e4m3(v.scalar).bits);
    case DType::F8E5M2:
      return put(slot, float8_e5m2(v.scalar).bits);
  }
  TESSERA_INTERNAL_CHECK(false, "unknown dtype");
}

TesseraTensorRef tensor_ref(const LoadedKernel& k, size_t index, const TensorArg& t) {
  if (t.shape.size() > TESSERA_MAX_RANK)
    fail<LaunchError>("kernel '", k.name, "': argument ", index + 1, " has rank ", t.shape.size(),
                      ", but the CUDA backend passes tensors of rank up to ", TESSERA_MAX_RANK,
                      "; reshape it, or run on the CPU backend");
  TESSERA_INTERNAL_CHECK(t.strides.size() == t.shape.size(), "strides and shape disagree");
  TesseraTensorRef ref{};
  ref.data = t.data;
  for (size_t d = 0; d < TESSERA_MAX_RANK; ++d) {
    ref.shape[d] = d < t.shape.size() ? t.shape[d] : 1;
    ref.strides[d] = d < t.strides.size() ? t.strides[d] : 0;
  }
  return ref;
}

// The TMA descriptor of `spec` over tensor argument t (rank 2 to 4, f16/bf16, outer strides
// 16-byte aligned: the code generator asked for it only then). The driver checks the rest and
// refuses what the hardware cannot do (an extent past 2^32, a misaligned base), which would be a
// bug of ours.
CUtensorMap tensor_map(const LoadedKernel& k, const TensorMapSpec& spec, const TensorArg& t) {
  const size_t esize = dtype_size(t.dtype);
  const size_t rank = t.shape.size();
  if (rank < 2 || rank > 4 || (t.dtype != DType::F16 && t.dtype != DType::BF16) ||
      spec.outer_axis < 0 || static_cast<size_t>(spec.outer_axis) + 1 >= rank)
    fail<InternalError>("internal error (a bug in Tessera): kernel '", k.name,
                        "' asks for a tensor map of argument ", spec.param + 1, ", a ",
                        dtype_name(t.dtype), " tensor of rank ", t.shape.size());
  // TMA coordinates are 32-bit: a larger extent takes the kernel past what it can address.
  for (int64_t e : t.shape)
    if (e > INT32_MAX)
      fail<LaunchError>("kernel '", k.name, "': argument ", spec.param + 1, " has shape ",
                        to_string(t.shape), "; the tensor-memory accelerator addresses extents up ",
                        "to 2^31 - 1 elements; split the tensor along that axis");
  // Innermost axis first, as TMA counts them.
  cuuint64_t dims[4], strides[3];
  cuuint32_t box[4], element_strides[4];
  for (size_t i = 0; i < rank; ++i) {
    const size_t axis = rank - 1 - i;
    dims[i] = static_cast<cuuint64_t>(t.shape[axis]);
    if (i > 0) strides[i - 1] = static_cast<cuuint64_t>(t.strides[axis]) * esize;
    box[i] = i == 0 ? static_cast<cuuint32_t>(spec.box_inner)
             : axis == static_cast<size_t>(spec.outer_axis)
                 ? static_cast<cuuint32_t>(spec.box_outer)
                 : 1u;
    element_strides[i] = 1;
  }
  const CUtensorMapSwizzle swizzle = spec.swizzle_bytes == 128  ? CU_TENSOR_MAP_SWIZZLE_128B
                                     : spec.swizzle_bytes == 64 ? CU_TENSOR_MAP_SWIZZLE_64B
                                                                : CU_TENSOR_MAP_SWIZZLE_32B;
  CUtensorMap map;
  const CUresult r = driver().cuTensorMapEncodeTiled(
      &map,
      t.dtype == DType::F16 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16 : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
      static_cast<cuuint32_t>(rank), t.data, dims, strides, box, element_strides,
      CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
      CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    check(r, "cuTensorMapEncodeTiled",
          detail::cat("encoding the tensor map of argument ", spec.param + 1, " (shape ",
                      to_string(t.shape), ") of kernel '", k.name, "'"));
  return map;
}

// The blocks a grid of tiles needs, checked: a wrapped count could be zero, a launch that
// "succeeds" and writes nothing.
int64_t checked_block_count(const Shape& grid, int blocks_per_tile) {
  const std::optional<int64_t> blocks = checked_mul(numel(grid), blocks_per_tile);
  if (!blocks)
    fail<LaunchError>("a grid of ", to_string(grid), " tiles of ", blocks_per_tile,
                      " blocks each has more blocks than a 64-bit count holds; use larger tiles");
  return *blocks;
}

}  // namespace

bool programmatic_launch_enabled() {
  const char* e = std::getenv("TESSERA_PDL");
  if (!e || !*e) return true;
  const std::string_view v(e);
  if (v != "0" && v != "1")
    fail<UsageError>("TESSERA_PDL is '", v, "'; set it to 0 (launch every kernel after the one ",
                     "before it has finished) or 1 (let a kernel start while the one before it ",
                     "finishes, on sm_90 and newer: the default), or unset it");
  return v == "1";
}

bool l2_prefetch_enabled() {
  const char* e = std::getenv("TESSERA_AB_PREFETCH");
  // On unless turned off: Qwen3-0.6B's batch-1 decode step 1.579 -> 1.530 ms with it (H100, two
  // rounds, scripts/ab_decode.sh; bench/results/2026-12-06-s19-gpu.md).
  if (!e || !*e) return true;
  const std::string_view v(e);
  if (v != "0" && v != "1")
    fail<UsageError>("TESSERA_AB_PREFETCH is '", v, "'; set it to 0 (kernels ignore their ",
                     "prefetch statements) or 1 (they warm L2 with those inputs before waiting ",
                     "for the kernel before them), or unset it (the same as 1)");
  return v == "1";
}

bool load_order_enabled() {
  const char* e = std::getenv("TESSERA_AB_LOAD_ORDER");
  if (!e || !*e) return true;
  const std::string_view v(e);
  if (v != "0" && v != "1")
    fail<UsageError>("TESSERA_AB_LOAD_ORDER is '", v,
                     "'; set it to 0 (generated kernels issue each load before its first use) or "
                     "1 (a kernel that is not a one-pass row-wise kernel issues its independent "
                     "loads first: the default), or unset it");
  return v == "1";
}

bool programmatic_serialization(const Arch& device_arch, bool kernel_waits, int driver_version) {
  // Read even when the answer is no, so that a mistyped value is reported on every machine.
  const bool enabled = programmatic_launch_enabled();
  return enabled && kernel_waits && device_arch.major >= 9 &&
         driver_version >= kProgrammaticLaunchDriverVersion;
}

int64_t grid_blocks(const Shape& grid, const DeviceProps& props, int blocks_per_tile) {
  return std::min<int64_t>(checked_block_count(grid, blocks_per_tile), props.max_grid_x);
}

void check_launch(const LoadedKernel& k, const std::vector<KernelParam>& params,
                  const LaunchArgs& args, const LaunchConfig& config) {
  const DeviceContext& ctx = *k.ctx;
  const DeviceProps& props = ctx.props();
  TESSERA_INTERNAL_CHECK(params.size() == args.args.size(), "kernel '", k.name, "' has ",
                         params.size(), " parameters but ", args.args.size(), " arguments");

  // The launch must fit the function (whose register use can lower the device's thread limit)
  // and the device.
  const int threads = config.threads_per_block;
  TESSERA_INTERNAL_CHECK(config.blocks_per_tile >= 1, "kernel '", k.name, "' has ",
                         config.blocks_per_tile, " blocks per tile");
  if (threads <= 0 || threads > k.max_threads_per_block)
    fail<LaunchError>("kernel '", k.name, "' is launched with ", threads,
                      " threads per block, but on GPU cuda:", ctx.ordinal(), " (", props.name,
                      ") it can run with 1 to ", k.max_threads_per_block, " (the device allows ",
                      props.max_threads_per_block,
                      "; the kernel's register use may allow fewer); use smaller tiles");
  if (static_cast<int64_t>(config.dynamic_shared_bytes) > k.max_dynamic_shared_bytes)
    fail<LaunchError>("kernel '", k.name, "' is launched with ", config.dynamic_shared_bytes,
                      " bytes of dynamic shared memory, but it was loaded for at most ",
                      k.max_dynamic_shared_bytes, " on GPU cuda:", ctx.ordinal(), " (", props.name,
                      "); use smaller tiles");
  if (args.grid.size() > TESSERA_MAX_RANK)
    fail<LaunchError>("kernel '", k.name, "' has a grid of rank ", args.grid.size(),
                      ", but the CUDA backend launches grids of rank up to ", TESSERA_MAX_RANK);

  for (int64_t t : args.grid) {
    if (t < 0)
      fail<LaunchError>("kernel '", k.name, "' has a negative grid ", to_string(args.grid));
    // Generated code holds a tile coordinate in 32 bits.
    if (t > INT32_MAX)
      fail<LaunchError>("kernel '", k.name, "' has a grid of ", to_string(args.grid),
                        " tiles; the CUDA backend runs at most 2^31 - 1 tiles along an axis; use "
                        "larger tiles");
  }
  for (size_t i = 0; i < params.size(); ++i)
    if (params[i].tensor) (void)tensor_ref(k, i, args.args[i].tensor);  // its rank
}

std::unique_ptr<Event> launch(const LoadedKernel& k, const std::vector<KernelParam>& params,
                              const LaunchArgs& args, const LaunchConfig& config,
                              void* error_report, CUstream stream) {
  const CUstream queue = stream ? stream : k.ctx->stream();
  queue_launch(k, params, args, config, error_report, queue);
  try {
    // Recorded even for an empty grid, so that waiting still means "everything before is done".
    return std::make_unique<Event>(*k.ctx, queue);
  } catch (...) {  // the kernel may be running: let it finish before the arguments go back
    (void)driver().cuStreamSynchronize(queue);
    throw;
  }
}

void queue_launch(const LoadedKernel& k, const std::vector<KernelParam>& params,
                  const LaunchArgs& args, const LaunchConfig& config, void* error_report,
                  CUstream stream, bool checked) {
  if (!checked) check_launch(k, params, args, config);
  const DeviceContext& ctx = *k.ctx;
  const CUstream queue = stream ? stream : ctx.stream();
  const DeviceProps& props = ctx.props();
  const int threads = config.threads_per_block;
  TesseraGrid grid{};
  for (size_t d = 0; d < TESSERA_MAX_RANK; ++d)
    grid.tiles[d] = d < args.grid.size() ? args.grid[d] : 1;
  grid.total = numel(args.grid);

  // On the stack for the usual kernel (no heap allocation per launch), on the heap past that.
  const size_t slot_count = params.size() + 1, map_count = config.tensor_maps.size();
  std::array<ArgSlot, kInlineSlots> inline_slots;
  std::array<void*, kInlineSlots + kInlineMaps> inline_pointers;
  std::array<CUtensorMap, kInlineMaps> inline_maps;
  std::vector<ArgSlot> heap_slots;
  std::vector<void*> heap_pointers;
  std::vector<CUtensorMap> heap_maps;
  ArgSlot* slots = inline_slots.data();
  void** pointers = inline_pointers.data();
  CUtensorMap* maps = inline_maps.data();
  if (slot_count > kInlineSlots || map_count > kInlineMaps) {
    heap_slots.resize(slot_count);
    heap_pointers.resize(slot_count + map_count);
    heap_maps.resize(map_count);
    slots = heap_slots.data();
    pointers = heap_pointers.data();
    maps = heap_maps.data();
  }
  put(slots[0], grid);
  for (size_t i = 0; i < params.size(); ++i) {
    if (params[i].tensor)
      put(slots[i + 1], tensor_ref(k, i, args.args[i].tensor));
    else
      put_scalar(slots[i + 1], params[i].dtype, args.args[i]);
  }
  for (size_t i = 0; i < slot_count; ++i) pointers[i] = slots[i].bytes;
  for (size_t m = 0; m < map_count; ++m) {
    const TensorMapSpec& spec = config.tensor_maps[m];
    maps[m] = tensor_map(k, spec, args.args.at(static_cast<size_t>(spec.param)).tensor);
    pointers[slot_count + m] = &maps[m];
  }

  ctx.make_current();
  // A launch and the copy of the module's report behind it are queued as one step: another
  // thread's launch of the kernel queued in between would put its error in this launch's copy.
  static std::mutex report_order;
  std::unique_lock<std::mutex> queuing(report_order, std::defer_lock);
  if (error_report && k.error_flag) queuing.lock();
  int64_t blocks = grid_blocks(args.grid, props, config.blocks_per_tile);
  if (config.blocks_per_sm > 0)
    blocks = std::min<int64_t>(blocks, int64_t{props.multiprocessors} * config.blocks_per_sm);
  if (blocks > 0) {
    CUresult r;
    if (config.programmatic_serialization) {
      // Programmatic dependent launch: the driver may start this grid once every block of the
      // kernel before it on the stream has executed griddepcontrol.launch_dependents (or exited),
      // instead of once that kernel has completed. What keeps the stream's order is the kernel's
      // own griddepcontrol.wait before its first global access (codegen.cpp,
      // grid_dependency_prologue): it returns once the grids before it have completed and their
      // memory is visible. The attribute concerns only a kernel right before this one: cuda.h,
      // CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION, "allow the grid's execution to
      // overlap with the previous kernel in the stream, if that kernel requests the overlap".
      // An event wait, a copy, a memset or a host function before it requests nothing, so this
      // launch waits for it as any launch does; in a captured graph such a predecessor gets a
      // full edge (CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC "may only be used between kernel
      // nodes", cuda.h). A kernel without the wait (SIMT, a user's) is never launched so.
      CUlaunchAttribute attribute{};
      attribute.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
      attribute.value.programmaticStreamSerializationAllowed = 1;
      CUlaunchConfig launch{};
      launch.gridDimX = static_cast<unsigned>(blocks);
      launch.gridDimY = launch.gridDimZ = 1;
      launch.blockDimX = static_cast<unsigned>(threads);
      launch.blockDimY = launch.blockDimZ = 1;
      launch.sharedMemBytes = static_cast<unsigned>(config.dynamic_shared_bytes);
      launch.hStream = queue;
      launch.attrs = &attribute;
      launch.numAttrs = 1;
      r = driver().cuLaunchKernelEx(&launch, k.function, pointers, nullptr);
    } else {
      r = driver().cuLaunchKernel(
          k.function, static_cast<unsigned>(blocks), 1, 1, static_cast<unsigned>(threads), 1, 1,
          static_cast<unsigned>(config.dynamic_shared_bytes), queue, pointers, nullptr);
    }
    // The context is built only on failure: this is the hot path of every launch.
    if (r != CUDA_SUCCESS)
      check(r, config.programmatic_serialization ? "cuLaunchKernelEx" : "cuLaunchKernel",
            detail::cat("launching kernel '", k.name, "' (", blocks, " blocks of ", threads,
                        " threads) on GPU cuda:", ctx.ordinal()));
  }
  // The launch's own copy of the module's report, then the report cleared for the next launch:
  // the stream runs them in order, so each launch's copy holds what that launch wrote, and a
  // later launch's error cannot surface in this one's wait (nor this one's in a later one's).
  // Past this point the kernel may be running: if queuing the rest fails, wait for the stream
  // before throwing, since the launcher then hands the arguments back to the caller.
  try {
    if (error_report && k.error_flag) queue_report_copy(k, error_report, queue);
  } catch (...) {
    (void)driver().cuStreamSynchronize(queue);
    throw;
  }
}

void queue_report_copy(const LoadedKernel& k, void* report, CUstream stream) {
  const auto to = reinterpret_cast<CUdeviceptr>(report);
  if (k.error_info == k.error_flag + 8) {
    TESSERA_CU(cuMemcpyDtoDAsync, to, k.error_flag, kErrorReportBytes, stream);
  } else {
    TESSERA_CU(cuMemcpyDtoDAsync, to, k.error_flag, sizeof(int), stream);
    TESSERA_CU(cuMemcpyDtoDAsync, to + 8, k.error_info, 5 * sizeof(long long), stream);
  }
  TESSERA_CU(cuMemsetD8Async, k.error_flag, 0, sizeof(int), stream);
}

}  // namespace tessera::backend::cuda
