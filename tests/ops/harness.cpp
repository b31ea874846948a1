#include "harness.hpp"

#include <cmath>
#include <cstdlib>
#include <limits>
#include <sstream>

#include "tessera/runtime/gpu.hpp"

namespace tessera::test {

// ---- Rng ---------------------------------------------------------------------------------------

namespace {
uint32_t pick_seed() {
  if (const char* s = std::getenv("TESSERA_TEST_SEED"); s && *s)
    return static_cast<uint32_t>(std::strtoul(s, nullptr, 10));
  return std::random_device{}();
}
}  // namespace

Rng::Rng() : seed_(pick_seed()), engine_(seed_) {}

double Rng::uniform(double lo, double hi) {
  return std::uniform_real_distribution<double>(lo, hi)(engine_);
}

int64_t Rng::integer(int64_t lo, int64_t hi) {
  return std::uniform_int_distribution<int64_t>(lo, hi)(engine_);
}

int64_t Rng::ragged(int64_t tile, int64_t max_tiles) {
  const int64_t whole = integer(1, max_tiles) * tile;
  return tile == 1 ? whole : whole + integer(1, tile - 1);
}

// ---- the reference -----------------------------------------------------------------------------

double round_to_format(double x, int precision, int min_exponent, double max_finite) {
  if (!std::isfinite(x) || x == 0) return x;
  int e = 0;
  std::frexp(x, &e);  // x = m * 2^e, 0.5 <= |m| < 1
  // The spacing of representable values around x: 2^(e - precision) for normal numbers, fixed at
  // the bottom of the normal range for subnormal ones.
  const int quantum = std::max(e, min_exponent) - precision;
  const double r = std::ldexp(std::nearbyint(std::ldexp(x, -quantum)), quantum);  // ties to even
  return std::fabs(r) > max_finite ? std::copysign(INFINITY, x) : r;
}

template <Element T>
double cast_reference(double x) {
  if constexpr (std::is_same_v<T, float>)
    return round_to_format(x, 24, -125, std::numeric_limits<float>::max());
  else if constexpr (std::is_same_v<T, half>)
    return round_to_format(x, 11, -13, 65504.0);
  else if constexpr (std::is_same_v<T, bfloat16>)
    return round_to_format(x, 8, -125, 0x1.fep127);
  else if constexpr (std::is_same_v<T, double>)
    return x;
  else if constexpr (std::is_same_v<T, float8_e4m3> || std::is_same_v<T, float8_e5m2>) {
    // fp8 saturates (SATFINITE): past the largest finite value, infinities included, is +-max.
    constexpr bool e4m3 = std::is_same_v<T, float8_e4m3>;
    const double max = e4m3 ? 448.0 : 57344.0;
    if (std::isnan(x)) return x;
    const double r = std::isinf(x) ? x : round_to_format(x, e4m3 ? 4 : 3, e4m3 ? -5 : -13, 1e300);
    return std::fabs(r) > max ? std::copysign(max, x) : r;
  } else {
    if (std::isnan(x)) return 0;
    const double lo = static_cast<double>(std::numeric_limits<T>::min());
    const double hi = static_cast<double>(std::numeric_limits<T>::max());
    return std::fmin(std::fmax(std::trunc(x), lo), hi);
  }
}

void for_each_index(const Shape& shape, const std::function<void(const Shape&)>& f) {
  if (numel(shape) == 0) return;
  Shape idx(shape.size(), 0);
  for (int64_t n = numel(shape); n > 0; --n) {
    f(idx);
    for (size_t d = shape.size(); d-- > 0;) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
}

// ---- Guarded -----------------------------------------------------------------------------------

Device test_device() {
  static const Device d = [] {
    const char* s = std::getenv("TESSERA_TEST_DEVICE");
    return s && *s ? Device::parse(s) : Device::cpu();
  }();
  return d;
}

namespace {
template <Element T, size_t N>
Tensor<T> wrap_rank(T* data, const Shape& s, Device device) {
  int64_t extents[N];
  for (size_t d = 0; d < N; ++d) extents[d] = s[d];
  return Tensor<T>(wrap_unowned_unchecked<T, N>(data, extents, device));
}
}  // namespace

template <Element T>
Guarded<T>::Guarded(Shape shape, Fill fill)
    : shape_(std::move(shape)),
      // Input guards hold all-ones bytes: NaN for every float format, -1 for integers. Outputs
      // are poisoned with 0xA5 bytes, a value no test expects.
      pattern_(fill == Fill::Input ? 0xFF : 0xA5),
      device_(test_device()) {
  for (int64_t d : shape_) outer_.push_back(kGuardBefore + d + kGuardAfter);
  outer_strides_ = row_major_strides(outer_);
  buf_.resize(static_cast<size_t>(numel(outer_)));
  std::memset(static_cast<void*>(buf_.data()), pattern_, buf_.size() * sizeof(T));
}

template <Element T>
Guarded<T>::~Guarded() {
  if (mirror_) runtime::gpu_free(device_, mirror_);
}

template <Element T>
void Guarded<T>::pull() const {
  if (!mirror_newer_) return;
  runtime::gpu_copy_to_host(device_, buf_.data(), mirror_, buf_.size() * sizeof(T));
  mirror_newer_ = false;
}

template <Element T>
int64_t Guarded<T>::offset(const Shape& idx) const {
  int64_t o = 0;
  for (size_t d = 0; d < idx.size(); ++d) o += (idx[d] + kGuardBefore) * outer_strides_[d];
  return o;
}

template <Element T>
void Guarded<T>::fill(const std::function<double(const Shape&)>& f) {
  pull();
  host_newer_ = true;
  for_each_index(shape_, [&](const Shape& idx) { buf_[offset(idx)] = from_double<T>(f(idx)); });
  // A view taken earlier sees the new values, as it would on the CPU.
  if (mirror_) {
    runtime::gpu_copy_to_device(device_, mirror_, buf_.data(), buf_.size() * sizeof(T));
    host_newer_ = false;
  }
}

template <Element T>
void Guarded<T>::fill_uniform(Rng& rng, double lo, double hi) {
  fill([&](const Shape&) {
    if constexpr (is_float_v<T>)
      return rng.uniform(lo, hi);
    else
      return static_cast<double>(rng.integer(static_cast<int64_t>(lo), static_cast<int64_t>(hi)));
  });
}

template <Element T>
Tensor<T> Guarded<T>::view() {
  T* data = buf_.data();
  if (device_.is_cuda()) {
    const size_t bytes = buf_.size() * sizeof(T);
    if (!mirror_) mirror_ = runtime::gpu_allocate(device_, bytes);
    pull();
    if (host_newer_) runtime::gpu_copy_to_device(device_, mirror_, buf_.data(), bytes);
    host_newer_ = false;
    mirror_newer_ = true;
    data = static_cast<T*>(mirror_);
  }
  Tensor<T> t;
  switch (shape_.size()) {
    case 1:
      t = wrap_rank<T, 1>(data, outer_, device_);
      break;
    case 2:
      t = wrap_rank<T, 2>(data, outer_, device_);
      break;
    case 3:
      t = wrap_rank<T, 3>(data, outer_, device_);
      break;
    case 4:
      t = wrap_rank<T, 4>(data, outer_, device_);
      break;
    default:
      ADD_FAILURE() << "Guarded tensors have rank 1 to 4, not " << shape_.size();
      return t;
  }
  for (size_t d = 0; d < shape_.size(); ++d)
    t = t.slice(static_cast<int>(d), kGuardBefore, kGuardBefore + shape_[d]);
  // The kernels run where their tensors live: here, on the device the run asked for.
  EXPECT_EQ(t.device(), device_) << "a guarded view is not on TESSERA_TEST_DEVICE";
  return t;
}

template <Element T>
bool Guarded<T>::guard_intact(std::string* where) const {
  pull();
  std::vector<bool> inside(buf_.size(), false);
  for_each_index(shape_, [&](const Shape& idx) { inside[offset(idx)] = true; });
  for (size_t i = 0; i < buf_.size(); ++i) {
    if (inside[i]) continue;
    const auto* bytes = reinterpret_cast<const unsigned char*>(&buf_[i]);
    for (size_t b = 0; b < sizeof(T); ++b)
      if (bytes[b] != pattern_) {
        std::ostringstream os;
        os << "buffer element " << i << " (outer shape " << to_string(outer_)
           << ", the tensor starts at " << kGuardBefore << " on every axis) now holds "
           << to_double(buf_[i]);
        *where = os.str();
        return false;
      }
  }
  return true;
}

template <Element T>
void expect_matches(const Guarded<T>& out, const IndexFn& want, double rtol, const IndexFn& scale) {
  int reported = 0;
  int64_t wrong = 0;
  for_each_index(out.shape(), [&](const Shape& idx) {
    const double got = out.at(idx), w = want(idx);
    bool ok;
    if (std::isnan(w) || std::isnan(got))
      ok = std::isnan(w) && std::isnan(got);
    else if (std::isinf(w) || rtol == 0)
      ok = got == w;
    else
      ok = std::fabs(got - w) <= rtol * (scale ? scale(idx) : std::fmax(std::fabs(w), 1e-3));
    if (ok) return;
    ++wrong;
    if (reported++ < 8)
      ADD_FAILURE() << "element " << to_string(idx) << " of the " << dtype_tag<T>() << " output "
                    << to_string(out.shape()) << " is " << got << ", the reference is " << w
                    << " (relative tolerance " << rtol << ")";
  });
  EXPECT_EQ(wrong, 0) << "elements differ from the reference";
  std::string where;
  EXPECT_TRUE(out.guard_intact(&where)) << "a store wrote outside its output tensor: " << where;
}

#define TESSERA_TEST_INSTANTIATE(T)                                                           \
  template class Guarded<T>;                                                                  \
  template void expect_matches<T>(const Guarded<T>&, const IndexFn&, double, const IndexFn&); \
  template double cast_reference<T>(double);
TESSERA_TEST_INSTANTIATE(int8_t)
TESSERA_TEST_INSTANTIATE(int32_t)
TESSERA_TEST_INSTANTIATE(int64_t)
TESSERA_TEST_INSTANTIATE(half)
TESSERA_TEST_INSTANTIATE(bfloat16)
TESSERA_TEST_INSTANTIATE(float)
TESSERA_TEST_INSTANTIATE(double)
TESSERA_TEST_INSTANTIATE(float8_e4m3)
TESSERA_TEST_INSTANTIATE(float8_e5m2)
#undef TESSERA_TEST_INSTANTIATE

// ---- the table ---------------------------------------------------------------------------------

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  return info.param.name;
}

// Every row: run it with a fresh random source, and name the seed in any failure.
TEST_P(OpTest, MatchesDoubleReference) {
  Rng rng;
  SCOPED_TRACE(::testing::Message() << "random seed " << rng.seed()
                                    << " (replay with TESSERA_TEST_SEED=" << rng.seed() << ")");
  GetParam().run(rng);
}

}  // namespace tessera::test
