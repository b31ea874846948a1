// The launch-shape rules of prepare<K>() and launch_unchecked().
#include "tessera/simt/check.hpp"

#include <optional>
#include <string>

#include "tessera/core/checked.hpp"
#include "tessera/core/error.hpp"

namespace tessera::simt::detail {

namespace {

constexpr const char* kAxis[3] = {"x", "y", "z"};

std::string cc_text(ComputeCapability cc) {
  return tessera::detail::cat(cc.major, ".", cc.minor);
}

std::string device_text(const DeviceLimits& d) {
  return d.name.empty() ? tessera::detail::cat("device ", d.ordinal)
                        : tessera::detail::cat("device ", d.ordinal, " (", d.name, ")");
}

// Extents every launch must respect: positive blocks, grids within the device's limits.
void check_extents(std::string_view kernel, const Geometry& g, const DeviceLimits& device) {
  for (int a = 0; a < 3; ++a) {
    if (g.block[a] < 1)
      fail<LaunchError>("kernel '", kernel, "': the block extent along ", kAxis[a], " is ",
                        g.block[a],
                        ", but a block has at least 1 thread along each axis; use 1 "
                        "for an axis the launch does not use.");
    if (g.block[a] > device.max_block[a])
      fail<LaunchError>("kernel '", kernel, "': the block extent along ", kAxis[a], " is ",
                        g.block[a], ", more than the ", device.max_block[a], " that ",
                        device_text(device), " allows; use smaller blocks.");
    if (g.grid[a] < 0)
      fail<LaunchError>("kernel '", kernel, "': the grid extent along ", kAxis[a], " is ",
                        g.grid[a], "; it must be 0 (no launch) or more.");
    if (g.grid[a] > device.max_grid[a])
      fail<LaunchError>("kernel '", kernel, "': the grid extent along ", kAxis[a], " is ",
                        g.grid[a], ", more than the ", device.max_grid[a], " that ",
                        device_text(device),
                        " allows; use larger blocks or give each thread "
                        "more work.");
  }
}

void check_threads(std::string_view kernel, const Geometry& g, const DeviceLimits& device,
                   const FunctionLimits& function) {
  const index_t threads = g.block[0] * g.block[1] * g.block[2];  // each <= 1024: no overflow
  if (threads > device.max_threads_per_block)
    fail<LaunchError>("kernel '", kernel, "': a block of ", dims_text(g.block, 3), " has ", threads,
                      " threads, more than the ", device.max_threads_per_block, " per block that ",
                      device_text(device), " allows; use smaller blocks.");
  if (threads > function.max_threads_per_block)
    fail<LaunchError>("kernel '", kernel, "': a block of ", dims_text(g.block, 3), " has ", threads,
                      " threads, more than the ", function.max_threads_per_block,
                      " per block this kernel can run with on ", device_text(device), " (it uses ",
                      function.registers,
                      " registers per thread); use smaller blocks, or "
                      "declare a smaller block in the contract so the compiler budgets registers "
                      "for it.");
}

void check_shared(std::string_view kernel, const Geometry& g, const DeviceLimits& device,
                  const FunctionLimits& function) {
  if (g.dynamic_shared_bytes < 0)
    fail<LaunchError>("kernel '", kernel, "': ", g.dynamic_shared_bytes,
                      " bytes of dynamic shared memory; the amount must be 0 or more.");
  // Checked: a sum that wrapped negative would pass the limit and reach the driver as a huge
  // size_t.
  const auto dynamic = static_cast<int64_t>(g.dynamic_shared_bytes);
  const std::optional<int64_t> total =
      tessera::checked_add(dynamic, static_cast<int64_t>(function.static_shared_bytes));
  if (!total || *total > device.shared_per_block_optin)
    fail<LaunchError>("kernel '", kernel, "': ", g.dynamic_shared_bytes,
                      " bytes of dynamic shared memory plus the kernel's ",
                      function.static_shared_bytes, " bytes of static shared memory make ",
                      total ? std::to_string(*total) : std::string("more than 2^63 - 1"),
                      " bytes per block, more than the ", device.shared_per_block_optin,
                      " bytes that ", device_text(device), " allows; use less shared memory.");
}

}  // namespace

std::string dims_text(const index_t* v, int rank) {
  std::string s = "(";
  for (int a = 0; a < rank; ++a) s += (a ? ", " : "") + std::to_string(v[a]);
  return s + ")";
}

void check_device_limits(std::string_view kernel, const Geometry& g, const DeviceLimits& device,
                         const FunctionLimits& function) {
  check_extents(kernel, g, device);
  check_threads(kernel, g, device, function);
  check_shared(kernel, g, device, function);
}

void check_contracted_launch(const ContractView& c, const Geometry& g, const DeviceLimits& device,
                             const FunctionLimits& function) {
  const std::string_view k = c.kernel;
  if (device.cc < c.min_cc)
    fail<LaunchError>("kernel '", k, "': its contract needs compute capability ", cc_text(c.min_cc),
                      " or newer, but ", device_text(device), " is ", cc_text(device.cc),
                      "; run it on a newer GPU, or lower the contract's "
                      "min_compute_capability if the kernel does not need it.");

  const std::string shape = dims_text(g.block, c.rank);
  const std::string declared = dims_text(c.block, c.rank);
  if (c.block_rule == BlockRule::Exactly) {
    for (int a = 0; a < 3; ++a)
      if (g.block[a] != c.block[a])
        fail<LaunchError>("kernel '", k, "': the launch's block shape ", shape,
                          " is not the contract's exact block shape ", declared,
                          " (they differ along ", kAxis[a], ": ", g.block[a], " and ", c.block[a],
                          "); launch blocks of ", declared, ".");
  } else if (c.block_rule == BlockRule::AtMost) {
    for (int a = 0; a < 3; ++a)
      if (g.block[a] > c.block[a])
        fail<LaunchError>("kernel '", k, "': the launch's block shape ", shape,
                          " is larger than the contract allows along ", kAxis[a], " (", g.block[a],
                          " threads, at most ", c.block[a],
                          "); launch blocks of at "
                          "most ",
                          declared, ".");
  }

  for (int a = 0; a < 2; ++a)
    if (c.witness_block[a] != 0 && g.block[a] != static_cast<index_t>(c.witness_block[a])) {
      const index_t need[2] = {c.witness_block[0], c.witness_block[1]};
      fail<LaunchError>("kernel '", k, "': its ", c.witness,
                        " witness hands each thread its own "
                        "micro-tile only in blocks of exactly ",
                        dims_text(need, 2), " threads, but the launch's block shape is ", shape,
                        " (they differ along ", kAxis[a], ": ", g.block[a], " and ",
                        c.witness_block[a], "); launch blocks of ", dims_text(need, 2), ".");
    }
  if (g.block[0] % c.block_x_multiple != 0)
    fail<LaunchError>("kernel '", k, "': its ", c.witness,
                      " witness needs the block extent along "
                      "x to be a multiple of ",
                      c.block_x_multiple, " (whole warps), but it is ", g.block[0],
                      "; launch blocks of a multiple of ", c.block_x_multiple, " threads.");

  check_device_limits(k, g, device, function);
}

}  // namespace tessera::simt::detail
