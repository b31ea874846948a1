// Traces a kernel body straight into IR, with no runtime and no launch: how the IR, analysis and
// tracer tests get functions from ordinary DSL code.
#pragma once

#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "tessera/ir/ir.hpp"
#include "tessera/tile/params.hpp"

namespace tessera::test {

inline ir::Param out_param(std::string name, DType dtype, Shape tile) {
  const int rank = static_cast<int>(tile.size());
  return {std::move(name), ir::ParamKind::Out, dtype, rank, std::move(tile)};
}
inline ir::Param in_param(std::string name, DType dtype, int rank) {
  return {std::move(name), ir::ParamKind::In, dtype, rank, {}};
}
inline ir::Param scalar_param(std::string name, DType dtype) {
  return {std::move(name), ir::ParamKind::Scalar, dtype, 0, {}};
}

// Traces body(P...) as kernel `name`; P are the DSL parameter types (Out<float>, In<half>, ...),
// described by `params` in the same order.
template <class... P, class F>
ir::Function trace_kernel(std::string name, std::vector<ir::Param> params, F&& body,
                          SourceLoc loc = SourceLoc::current()) {
  return tile::detail::trace(std::move(name), std::move(params), loc, [&] {
    [&]<size_t... I>(std::index_sequence<I...>) {
      // Braced, so the parameters (and any IR they emit) are made in declaration order.
      std::tuple<P...> values{P(tile::detail::ParamTag{static_cast<int>(I)})...};
      std::apply(body, std::move(values));
    }
    (std::index_sequence_for<P...>{});
  });
}

}  // namespace tessera::test
