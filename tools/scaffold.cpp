// The text of a new project. One kernel (z = a * x + y), a program that runs it, a test that checks
// it against a host reference, and a CMakeLists.txt that finds the installed Tessera package. The
// test is a plain program run by CTest (exit status 0 or 1), so a new project needs nothing but
// Tessera and CMake.
#include "scaffold.hpp"

namespace tessera::tools {

namespace {

// Replaces every "@NAME@" in `text` by `name` (and "@PREFIX@" by `prefix`).
std::string fill(std::string_view text, std::string_view name, std::string_view prefix) {
  std::string out(text);
  for (const auto& [key, value] :
       {std::pair<std::string_view, std::string_view>{"@NAME@", name}, {"@PREFIX@", prefix}}) {
    for (size_t at = out.find(key); at != std::string::npos; at = out.find(key, at + value.size()))
      out.replace(at, key.size(), value);
  }
  return out;
}

constexpr std::string_view kCMakeLists = R"(cmake_minimum_required(VERSION 3.25)
project(@NAME@ LANGUAGES CXX)

# Tessera, installed with `cmake --install` (pass its folder as CMAKE_PREFIX_PATH). Without a GPU,
# kernels run on Tessera's CPU backend; with one, they are compiled for it when first launched.
find_package(Tessera 0.1 CONFIG REQUIRED)

add_executable(@NAME@ main.cpp)
target_link_libraries(@NAME@ PRIVATE Tessera::tessera)

enable_testing()
add_executable(@NAME@_test test.cpp)
target_link_libraries(@NAME@_test PRIVATE Tessera::tessera)
add_test(NAME @NAME@_test COMMAND @NAME@_test)
)";

constexpr std::string_view kKernel =
    R"(// The project's kernel. Each tile block runs the body once, on its own tile of z; x and y are
// read-only. Add kernels here, or in headers beside it.
#pragma once

#include <tessera/tessera.hpp>

// z = a * x + y.
TESSERA_KERNEL(scaled_add, tessera::tile::Out<float> z, tessera::tile::Scalar<float> a,
               tessera::tile::In<float> x, tessera::tile::In<float> y) {
  using namespace tessera::tile;
  z.store(a * load_like(x, z) + load_like(y, z));
};
)";

constexpr std::string_view kMain =
    R"(// Runs the kernel once and prints a few elements of its result.
#include <cstdio>
#include <vector>

#include "kernel.hpp"

int main() {
  using namespace tessera;
  const int64_t n = 1000;
  const auto x = arange<float>(n);  // 0, 1, 2, ...
  const auto y = ones<float>({n});
  // The output is cut into tiles of 256 elements before the launch; each block writes its own.
  auto z = zeros<float>({n}).partition({256});
  auto [z1, a1, x1, y1] = scaled_add(std::move(z), 2.0f, x, y).sync();
  const std::vector<float> out = std::move(z1).unpartition().to_vector();
  std::printf("@NAME@: z = 2 * x + 1 on %s: z[0] = %g, z[1] = %g, z[999] = %g\n",
              x.device().str().c_str(), out[0], out[1], out[999]);
  return 0;
}
)";

constexpr std::string_view kTest =
    R"(// Checks the kernel against a double-precision reference on the host. Exits 1 when an element
// is wrong. CTest runs it: `ctest --test-dir build`.
#include <cmath>
#include <cstdio>
#include <vector>

#include "kernel.hpp"

int main() {
  using namespace tessera;
  const int64_t n = 1000;  // not a multiple of the tile: the last tile is ragged
  std::vector<float> xs(n), ys(n);
  for (int64_t i = 0; i < n; ++i) xs[i] = std::sin(0.1f * i), ys[i] = 0.001f * i - 0.5f;
  const auto x = from_host(xs);
  const auto y = from_host(ys);
  const float a = 2.5f;
  auto z = zeros<float>({n}).partition({256});
  auto [z1, a1, x1, y1] = scaled_add(std::move(z), a, x, y).sync();
  const std::vector<float> out = std::move(z1).unpartition().to_vector();
  for (int64_t i = 0; i < n; ++i) {
    const double want = double{a} * xs[i] + ys[i];
    // Two f32 roundings, relative to the terms.
    if (std::fabs(out[i] - want) > 1e-6 * (std::fabs(double{a} * xs[i]) + std::fabs(ys[i]))) {
      std::printf("@NAME@_test: element %lld is %.9g, the reference is %.9g\n",
                  static_cast<long long>(i), out[i], want);
      return 1;
    }
  }
  std::printf("@NAME@_test: %lld elements on %s: ok\n", static_cast<long long>(n),
              x.device().str().c_str());
  return 0;
}
)";

constexpr std::string_view kReadme = R"(# @NAME@

A project that uses Tessera kernels: `kernel.hpp` holds the kernel,
`main.cpp` runs it, `test.cpp` checks it against a host reference.

Build it, then run its test:

```sh
cmake -S . -B build -DCMAKE_PREFIX_PATH=@PREFIX@ && cmake --build build
ctest --test-dir build --output-on-failure
```

`build/@NAME@` runs the kernel. It runs on the first GPU (sm_80 or newer) when there is one, and
on Tessera's CPU backend otherwise; `TESSERA_DEVICE=cpu` picks the CPU, `TESSERA_DEVICE=cuda:1`
the second GPU.
)";

constexpr std::string_view kGitignore = "/build/\n";

}  // namespace

std::vector<ScaffoldFile> scaffold_files(std::string_view name, std::string_view prefix) {
  const std::string_view where =
      prefix.empty() ? std::string_view("<the folder Tessera is installed in>") : prefix;
  std::vector<ScaffoldFile> files;
  for (const auto& [path, text] :
       {std::pair<const char*, std::string_view>{"CMakeLists.txt", kCMakeLists},
        {"kernel.hpp", kKernel},
        {"main.cpp", kMain},
        {"test.cpp", kTest},
        {"README.md", kReadme},
        {".gitignore", kGitignore}})
    files.push_back({path, fill(text, name, where)});
  return files;
}

}  // namespace tessera::tools
