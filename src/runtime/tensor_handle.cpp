#include "tessera/runtime/tensor_handle.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>

#include "tessera/backend/cpu/elements.hpp"
#include "tessera/core/checked.hpp"
#include "tessera/runtime/gpu.hpp"

#include "graph_capture.hpp"
#include "pending_access.hpp"

namespace tessera::runtime {

namespace {
constexpr size_t kAlign = 256;  // enough for any vector access, on the host and the GPU
}

size_t byte_size(DType dtype, const Shape& shape) {
  const int64_t n = tessera::numel(shape);  // throws when the count itself wraps
  const std::optional<int64_t> bytes = checked_mul(n, static_cast<int64_t>(dtype_size(dtype)));
  if (!bytes)
    fail<UsageError>("a ", dtype_name(dtype), " tensor of shape ", to_string(shape), " holds ", n,
                     " elements of ", dtype_size(dtype),
                     " bytes, more bytes than a 64-bit size "
                     "holds; use smaller extents");
  return static_cast<size_t>(*bytes);
}

Storage::Storage(Device device, size_t bytes) : device_(device), bytes_(bytes) {
  // Rounded up to whole alignment units; a size within one unit of SIZE_MAX cannot be had.
  const std::optional<size_t> padded = checked_add(bytes, kAlign - 1);
  void* data = nullptr;
  if (padded) {
    const size_t rounded = std::max(kAlign, *padded / kAlign * kAlign);
    if (device.is_cpu())
      data = std::aligned_alloc(kAlign, rounded);
    else
      data = gpu_allocate(device, rounded);  // a driver OOM is an OutOfMemoryError there
  }
  if (!data)
    fail<OutOfMemoryError>("out of memory: ", bytes, " bytes could not be allocated on ",
                           device.str(), "; use smaller tensors, or free some first");
  data_ = data;
}

Storage::Storage(Device device, void* data, size_t bytes)
    : device_(device), data_(data), bytes_(bytes), owned_(false) {}

Storage::~Storage() {
  // Launches may still use the memory (a chain's intermediate result is dropped while the
  // launches that write and read it are queued): it is freed behind them.
  std::function<void()> free_memory;
  if (owned_ && data_) {
    try {
      free_memory = [device = device_, data = data_] {
        if (device.is_cpu())
          std::free(data);
        else
          gpu_free(device, data);
      };
    } catch (...) {  // no memory for the closure: wait for the launches, then free
      PendingAccess::release(*this, nullptr);
      if (device_.is_cpu())
        std::free(data_);
      else
        gpu_free(device_, data_);
      return;
    }
  }
  PendingAccess::release(*this, std::move(free_memory), release_stream_);
}

TensorHandle::TensorHandle(std::shared_ptr<Storage> storage, DType dtype, Shape shape,
                           Shape strides, int64_t offset)
    : storage_(std::move(storage)),
      dtype_(dtype),
      shape_(std::move(shape)),
      strides_(std::move(strides)),
      offset_(offset) {}

namespace {
// The checked byte size of a new tensor, with the user's location on its errors.
size_t new_tensor_bytes(DType dtype, const Shape& shape, SourceLoc loc) {
  for (int64_t d : shape)
    if (d < 0)
      fail_at<UsageError>(loc, "tensor shape ", to_string(shape), " has a negative extent");
  try {
    return byte_size(dtype, shape);
  } catch (const UsageError& e) {
    fail_at<UsageError>(loc, e.what());
  }
}
}  // namespace

TensorHandle TensorHandle::allocate(DType dtype, Shape shape, Device device, SourceLoc loc) {
  const size_t bytes = new_tensor_bytes(dtype, shape, loc);
  std::shared_ptr<Storage> storage;
  try {
    storage = std::make_shared<Storage>(device, bytes);
  } catch (const OutOfMemoryError& e) {
    fail_at<OutOfMemoryError>(loc, e.what());
  }
  Shape strides = row_major_strides(shape);
  return TensorHandle(std::move(storage), dtype, std::move(shape), std::move(strides), 0);
}

TensorHandle TensorHandle::wrap_unowned(DType dtype, Shape shape, Device device, void* data,
                                        SourceLoc loc) {
  const size_t bytes = new_tensor_bytes(dtype, shape, loc);
  // Not make_shared: the constructor is private to this class.
  std::shared_ptr<Storage> storage(new Storage(device, data, bytes));
  Shape strides = row_major_strides(shape);
  return TensorHandle(std::move(storage), dtype, std::move(shape), std::move(strides), 0);
}

void TensorHandle::check_alive(SourceLoc loc) const {
  if (empty())
    fail_at<OwnershipError>(loc,
                            "this Tensor was moved from (into partition(), unpartition() or a "
                            "launch) and no longer owns anything; use the handle that operation "
                            "returned");
}

Device TensorHandle::device() const {
  check_alive();
  return storage_->device();
}

void* TensorHandle::data() const {
  check_alive();
  return static_cast<std::byte*>(storage_->data_) +
         offset_ * static_cast<int64_t>(dtype_size(dtype_));
}

void* TensorHandle::escape() const {
  void* p = data();
  graph_check_escape(*storage_, {});
  // The caller may read or write through the pointer at once: pending launches finish first.
  PendingAccess::wait_for_all(*storage_);
  storage_->escaped_.store(true, std::memory_order_relaxed);
  return p;
}

uintptr_t TensorHandle::address() const {
  return reinterpret_cast<uintptr_t>(data());
}

bool TensorHandle::contiguous() const {
  return strides_ == row_major_strides(shape_);
}

std::pair<uintptr_t, uintptr_t> TensorHandle::byte_range() const {
  const uintptr_t base = address();
  int64_t lo = 0, hi = 0;
  // Empty when an extent is 0 (numel() would also multiply the extents, checking overflow that
  // the shape's constructor has already ruled out): asked twice per launch, by the overlap check.
  if (std::find(shape_.begin(), shape_.end(), 0) != shape_.end()) return {base, base};
  for (size_t d = 0; d < shape_.size(); ++d) {
    const int64_t reach = (shape_[d] - 1) * strides_[d];
    (reach < 0 ? lo : hi) += reach;
  }
  const auto size = static_cast<int64_t>(dtype_size(dtype_));
  return {base + static_cast<uintptr_t>(lo * size), base + static_cast<uintptr_t>((hi + 1) * size)};
}

TensorHandle TensorHandle::slice(int axis, int64_t begin, int64_t end, SourceLoc loc) const {
  check_alive(loc);
  if (axis < 0 || axis >= rank())
    fail_at<UsageError>(loc, "slice along axis ", axis, " of a tensor of rank ", rank());
  if (begin < 0 || end > shape_[axis] || begin > end)
    fail_at<UsageError>(loc, "slice [", begin, ", ", end, ") of axis ", axis,
                        " is outside its extent ", shape_[axis]);
  TensorHandle view = *this;
  view.offset_ += begin * strides_[axis];
  view.shape_[axis] = end - begin;
  return view;
}

namespace {
// Calls f(element offset, flat row-major index) for every element of the view.
template <class F>
void for_each_offset(const Shape& shape, const Shape& strides, F&& f) {
  const int64_t n = tessera::numel(shape);
  Shape idx(shape.size(), 0);
  int64_t offset = 0;
  for (int64_t flat = 0; flat < n; ++flat) {
    f(offset, flat);
    for (size_t d = shape.size(); d-- > 0;) {
      offset += strides[d];
      if (++idx[d] < shape[d]) break;
      offset -= strides[d] * shape[d];
      idx[d] = 0;
    }
  }
}
}  // namespace

void TensorHandle::write_from_host(const void* src) {
  check_alive();
  PendingAccess::wait_for_all(*storage_);
  const size_t es = dtype_size(dtype_);
  const size_t bytes = static_cast<size_t>(numel()) * es;
  if (device().is_cpu()) {
    if (contiguous()) return (void)std::memcpy(data(), src, bytes);
    auto* dst = static_cast<std::byte*>(data());
    for_each_offset(shape_, strides_, [&](int64_t off, int64_t flat) {
      std::memcpy(dst + off * es, static_cast<const std::byte*>(src) + flat * es, es);
    });
    return;
  }
  if (!contiguous())
    fail<UsageError>(
        "writing host data into a strided view of a GPU tensor is not supported; "
        "write the whole tensor, or a contiguous slice of it");
  gpu_copy_to_device(device(), data(), src, bytes);
}

void TensorHandle::read_to_host(void* dst) const {
  check_alive();
  PendingAccess::wait_for_writer(*storage_);
  const size_t es = dtype_size(dtype_);
  const size_t bytes = static_cast<size_t>(numel()) * es;
  if (device().is_cpu()) {
    if (contiguous()) return (void)std::memcpy(dst, data(), bytes);
    const auto* src = static_cast<const std::byte*>(data());
    for_each_offset(shape_, strides_, [&](int64_t off, int64_t flat) {
      std::memcpy(static_cast<std::byte*>(dst) + flat * es, src + off * es, es);
    });
    return;
  }
  if (contiguous()) return gpu_copy_to_host(device(), dst, data(), bytes);
  // Strided GPU view: bring the span it covers to the host, then gather.
  auto [lo, hi] = byte_range();
  std::vector<std::byte> span(static_cast<size_t>(hi - lo));
  const std::byte* first = static_cast<const std::byte*>(data()) - (address() - lo);
  gpu_copy_to_host(device(), span.data(), first, span.size());
  const auto* base = span.data() + (address() - lo);
  for_each_offset(shape_, strides_, [&](int64_t off, int64_t flat) {
    std::memcpy(static_cast<std::byte*>(dst) + flat * es, base + off * es, es);
  });
}

TensorHandle TensorHandle::copy_to(Device target) const {
  check_alive();
  TensorHandle out = allocate(dtype_, shape_, target);
  std::vector<std::byte> host(static_cast<size_t>(numel()) * dtype_size(dtype_));
  read_to_host(host.data());
  out.write_from_host(host.data());
  return out;
}

void TensorHandle::fill(double value) {
  check_alive();
  PendingAccess::wait_for_all(*storage_);
  const size_t es = dtype_size(dtype_);
  if (device().is_cuda() && contiguous()) {
    // On the GPU itself: a 1 GiB fill through the host would cost a host buffer and a copy.
    std::byte element[16] = {};
    backend::cpu::write_element(element, dtype_, 0, value);
    return gpu_fill(device(), data(), element, es, static_cast<size_t>(numel()));
  }
  std::vector<std::byte> host(static_cast<size_t>(numel()) * es);
  if (host.empty()) return;
  // One element converted, then copied in doubling runs: a 1 GiB fill is a few memcpys.
  backend::cpu::write_element(host.data(), dtype_, 0, value);
  for (size_t done = es; done < host.size(); done *= 2)
    std::memcpy(host.data() + done, host.data(), std::min(done, host.size() - done));
  write_from_host(host.data());
}

}  // namespace tessera::runtime

namespace tessera::runtime {

Shape check_partition(const TensorHandle& h, const Shape& tile, SourceLoc loc) {
  h.check_alive(loc);
  // A graph's hold is a handle too; the one of the graph being captured does not count here, so
  // that a captured launch may write what an earlier one of the same graph used.
  if (h.use_count() - graph_check_partition(*h.storage(), loc) > 1)
    fail_at<OwnershipError>(loc, "partition() needs the only handle to the tensor's storage, but ",
                            h.use_count(),
                            " handles share it (copies, views, or launches still reading it); "
                            "drop the other handles, or sync the launches, first");
  if (h.storage()->escaped())
    fail_at<OwnershipError>(loc,
                            "partition() needs the only handle to the tensor's storage, but "
                            "its address was handed out by unchecked_data(), and a raw pointer "
                            "is a handle the checks cannot count; kernels may read this tensor "
                            "but not write it: partition a copy instead, "
                            "t.to(t.device()).partition(tile)");
  if (static_cast<int>(tile.size()) != h.rank())
    fail_at<UsageError>(loc, "partition(): tile shape ", to_string(tile), " has ", tile.size(),
                        " axes, but the tensor ", to_string(h.shape()), " has ", h.rank());
  Shape grid;
  for (size_t d = 0; d < tile.size(); ++d) {
    if (tile[d] <= 0)
      fail_at<UsageError>(loc, "partition(): tile shape ", to_string(tile),
                          " has a non-positive extent");
    grid.push_back(ceil_div(h.shape()[d], tile[d]));
  }
  // The tile's element count, checked: a wrapped count would be a tile that holds nothing.
  int64_t elements = 1;
  for (int64_t e : tile) {
    const std::optional<int64_t> next = checked_mul(elements, e);
    if (!next || *next > kMaxTileElements)
      fail_at<UsageError>(loc, "partition(): tile shape ", to_string(tile), " has more than ",
                          kMaxTileElements,
                          " elements, the most one tile may hold (a tile is one block's working "
                          "set); use a smaller tile");
    elements = *next;
  }
  return grid;
}

void check_accumulation(const TensorHandle& h, const Shape& grid, SourceLoc loc) {
  h.check_alive(loc);
  // The same ownership rule as a partition's: the launch is the only writer and the only reader.
  if (h.use_count() - graph_check_partition(*h.storage(), loc) > 1)
    fail_at<OwnershipError>(loc, "accumulate() needs the only handle to the tensor's storage, but ",
                            h.use_count(),
                            " handles share it (copies, views, or launches still reading it); "
                            "drop the other handles, or sync the launches, first");
  if (h.storage()->escaped())
    fail_at<OwnershipError>(loc,
                            "accumulate() needs the only handle to the tensor's storage, but "
                            "its address was handed out by unchecked_data(); accumulate into a "
                            "copy instead, t.to(t.device()).accumulate(grid)");
  for (int64_t g : grid)
    if (g <= 0)
      fail_at<UsageError>(loc, "accumulate(): grid ", to_string(grid),
                          " has a non-positive extent; give each axis's block count");
}

}  // namespace tessera::runtime
