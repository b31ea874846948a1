// SIMT row sums with a warp-shuffle reduction, compiled ahead of time by nvcc. Checked against a
// double-precision host sum of every row; exits non-zero when one is wrong, and prints a "skipped"
// line and exits 0 on a machine with no GPU.
#include <cmath>
#include <cstdio>
#include <vector>

#include <tessera/simt/simt.hpp>
#include <tessera/tessera.hpp>

#include "example_util.hpp"
#include "row_reduce_kernel.hpp"

using namespace tessera;
using namespace tessera::simt;
using simt_example::row_sum;

int main() {
  if (!simt_example::gpu_or_skip("simt_row_reduce")) return 0;
  try {
    const Device gpu = Device::cuda(0);
    const int64_t rows = 8192, cols = 8191;  // a row length that leaves lanes idle at the end
    std::vector<float> ms(rows * cols);
    for (int64_t i = 0; i < rows * cols; ++i)
      ms[i] = static_cast<float>((i * 37) % 101) / 50.0f - 1;
    auto m = from_host<float, 2>(ms, {rows, cols}, gpu);
    auto out = empty<float>({rows}, gpu);

    const auto reduce = prepare<row_sum>(Module::embedded(gpu), cover(rows * 32, 256));
    out = std::get<0>(reduce(std::move(out), m).sync());
    const std::vector<float> got = out.to_vector();
    for (int64_t r = 0; r < rows; ++r) {
      double want = 0;
      for (int64_t c = 0; c < cols; ++c) want += ms[r * cols + c];
      if (std::abs(got[r] - want) > 1e-5 * cols) {
        std::printf("simt_row_reduce: wrong sum of row %lld: %g != %g\n", static_cast<long long>(r),
                    got[r], want);
        return 1;
      }
    }
    std::vector<Tensor<float, 1>> outs;
    for (int i = 0; i < 3; ++i) outs.push_back(empty<float>({rows}, gpu));
    const double t = simt_example::seconds_per_launch(
        10, 20, [&](Tensor<float, 1> o) { return reduce(std::move(o), m); }, std::move(outs));
    std::printf("simt_row_reduce: %lld x %lld on %s: ok, %.1f GB/s (%.1f us)\n",
                static_cast<long long>(rows), static_cast<long long>(cols), gpu.str().c_str(),
                4.0 * rows * cols / t / 1e9, t * 1e6);
    return 0;
  } catch (const tessera::Error& e) {
    std::printf("simt_row_reduce: %s\n", e.what());
    return 1;
  }
}
