// Every row of the op table reaches the CUDA emitter through some corpus kernel and is lowered
// (the compile tests then compile those kernels); the tracer's local ops never reach it.
#include <gtest/gtest.h>

#include <set>

#include <tessera/tessera.hpp>

#include "corpus.hpp"
#include "tile/trace_kernel.hpp"

namespace tessera::test {
namespace {

using namespace tessera::tile;

constexpr int kOpKinds = 0
#define TESSERA_OP(E, mnemonic, nops, nres, nreg, cls) +1
#include "tessera/ir/ops.def"
#undef TESSERA_OP
    ;

TEST(EveryOp, EachRowOfTheOpTableIsEmittedByTheCorpus) {
  std::set<ir::OpKind> emitted;
  for (const CorpusKernel& k : corpus()) {
    const ir::Function f = prepared(k.make());
    ASSERT_NO_THROW(backend::cuda::emit(f, aligned_spec(f, kSm90a))) << k.name;
    ir::walk(f.body, [&](const ir::Op& op) { emitted.insert(op.kind); });
  }
  for (int i = 0; i < kOpKinds; ++i) {
    const auto kind = static_cast<ir::OpKind>(i);
    if (ir::op_info(kind).cls == ir::OpClass::Local) continue;  // removed by promote_locals
    EXPECT_TRUE(emitted.count(kind)) << "no corpus kernel uses '" << ir::mnemonic(kind)
                                     << "'; add one to tests/cuda_codegen/corpus.cpp";
  }
}

TEST(EveryOp, LocalOpsAreRejectedAsAnInternalError) {
  ir::Function f = trace_kernel<Out<float>, In<float>>(
      "unpromoted", {out_param("z", DType::F32, {8}), in_param("x", DType::F32, 1)},
      [](Out<float> z, In<float> x) {
        auto acc = Tile<float>::zeros({8});
        if_(z.tile_index(0) == 0, [&] { acc = load_like(x, z); });
        z.store(acc);
      });
  bool has_locals = false;
  ir::walk(f.body,
           [&](const ir::Op& op) { has_locals |= ir::op_info(op.kind).cls == ir::OpClass::Local; });
  ASSERT_TRUE(has_locals);
  EXPECT_THROW(backend::cuda::emit(f, aligned_spec(f, kSm90a)), InternalError);
}

}  // namespace
}  // namespace tessera::test
