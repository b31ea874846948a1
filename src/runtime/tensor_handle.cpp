#include "tessera/runtime/tensor_handle.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "tessera/backend/cpu/elements.hpp"
#include "tessera/runtime/gpu.hpp"

namespace tessera::runtime {

namespace {
constexpr size_t kAlign = 256;  // enough for any vector access, on the host and the GPU
}

Storage::Storage(Device device, size_t bytes) : device_(device), bytes_(bytes) {
  const size_t rounded = std::max(kAlign, (bytes + kAlign - 1) / kAlign * kAlign);
  if (device.is_cpu()) {
    data_ = std::aligned_alloc(kAlign, rounded);
    if (!data_) fail<UsageError>("out of host memory allocating ", bytes, " bytes");
  } else {
    data_ = gpu_allocate(device, rounded);
  }
}

Storage::Storage(Device device, void* data, size_t bytes)
    : device_(device), data_(data), bytes_(bytes), owned_(false) {}

Storage::~Storage() {
  if (!owned_ || !data_) return;
  if (device_.is_cpu()) std::free(data_);
  else gpu_free(device_, data_);
}

TensorHandle::TensorHandle(std::shared_ptr<Storage> storage, DType dtype, Shape shape,
                           Shape strides, int64_t offset)
    : storage_(std::move(storage)),
      dtype_(dtype),
      shape_(std::move(shape)),
      strides_(std::move(strides)),
      offset_(offset) {}

TensorHandle::TensorHandle(TensorHandle&& o) noexcept
    : storage_(std::move(o.storage_)),
      dtype_(o.dtype_),
      shape_(std::move(o.shape_)),
      strides_(std::move(o.strides_)),
      offset_(o.offset_) {
  o.storage_.reset();
}

TensorHandle& TensorHandle::operator=(TensorHandle&& o) noexcept {
  if (this != &o) {
    storage_ = std::move(o.storage_);
    o.storage_.reset();
    dtype_ = o.dtype_;
    shape_ = std::move(o.shape_);
    strides_ = std::move(o.strides_);
    offset_ = o.offset_;
  }
  return *this;
}

TensorHandle TensorHandle::allocate(DType dtype, Shape shape, Device device) {
  for (int64_t d : shape)
    if (d < 0) fail<UsageError>("tensor shape ", to_string(shape), " has a negative extent");
  const size_t bytes = static_cast<size_t>(tessera::numel(shape)) * dtype_size(dtype);
  auto storage = std::make_shared<Storage>(device, bytes);
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
  return static_cast<std::byte*>(storage_->data()) +
         offset_ * static_cast<int64_t>(dtype_size(dtype_));
}

bool TensorHandle::contiguous() const { return strides_ == row_major_strides(shape_); }

std::pair<const std::byte*, const std::byte*> TensorHandle::byte_range() const {
  const auto* base = static_cast<const std::byte*>(data());
  int64_t lo = 0, hi = 0;
  if (numel() == 0) return {base, base};
  for (size_t d = 0; d < shape_.size(); ++d) {
    const int64_t reach = (shape_[d] - 1) * strides_[d];
    (reach < 0 ? lo : hi) += reach;
  }
  const auto size = static_cast<int64_t>(dtype_size(dtype_));
  return {base + lo * size, base + (hi + 1) * size};
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
    fail<UsageError>("writing host data into a strided view of a GPU tensor is not supported; "
                     "write the whole tensor, or a contiguous slice of it");
  gpu_copy_to_device(device(), data(), src, bytes);
}

void TensorHandle::read_to_host(void* dst) const {
  check_alive();
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
  gpu_copy_to_host(device(), span.data(), lo, span.size());
  const auto* base = span.data() + (static_cast<const std::byte*>(data()) - lo);
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
  if (h.use_count() > 1)
    fail_at<OwnershipError>(loc, "partition() needs the only handle to the tensor's storage, but ",
                            h.use_count(),
                            " handles share it (copies, views, or launches still reading it); "
                            "drop the other handles, or sync the launches, first");
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
  return grid;
}

}  // namespace tessera::runtime
