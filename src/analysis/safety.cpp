#include "tessera/analysis/safety.hpp"

#include <vector>

namespace tessera::analysis {

void check_safety(const ir::Function& f) {
  std::vector<bool> stored(f.params.size(), false);
  ir::walk(f.body, [&](const ir::Op& op) {
    if (op.kind == ir::OpKind::Store) {
      const ir::Param& p = f.params.at(op.attrs.param);
      if (p.kind != ir::ParamKind::Out)
        fail_at<KernelError>(op.loc, "kernel '", f.name, "' stores to '", p.name,
                             "', which is not an Out parameter; inputs are read-only");
      if (!op.operands.empty() && op.operands.size() != 1)
        fail_at<KernelError>(op.loc, "kernel '", f.name, "': a store may not carry an index");
      stored[op.attrs.param] = true;
    }
    if (op.kind == ir::OpKind::Load && f.params.at(op.attrs.param).kind != ir::ParamKind::In)
      fail_at<KernelError>(op.loc, "kernel '", f.name, "' loads from '",
                           f.params[op.attrs.param].name,
                           "', which is not an In parameter");
  });
  for (size_t i = 0; i < f.params.size(); ++i)
    if (f.params[i].kind == ir::ParamKind::Out && !stored[i])
      fail_at<KernelError>(f.loc, "kernel '", f.name, "' never stores to its Out parameter '",
                           f.params[i].name,
                           "', so its tiles would keep whatever they held before; store a tile "
                           "to it, or make it an In parameter");
}

}  // namespace tessera::analysis
