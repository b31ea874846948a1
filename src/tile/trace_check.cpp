#include "tessera/tile/trace_check.hpp"

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "tessera/ir/printer.hpp"

namespace tessera::tile {
namespace {

const char* const kDependsOnHiddenState =
    "; its body depends on state the specialization key cannot see (a host variable that "
    "changed, a counter, a random number, or a tile kept in a static from an earlier trace), "
    "and only one trace would ever run; pass such a value as a Scalar<T> parameter, make it "
    "constexpr, or make the tile inside the body";

std::vector<const ir::Op*> ops_in_order(const ir::Function& f) {
  std::vector<const ir::Op*> ops;
  ir::walk(f.body, [&](const ir::Op& op) { ops.push_back(&op); });
  return ops;
}

bool same_op(const ir::Function& fa, const ir::Op& a, const ir::Function& fb, const ir::Op& b) {
  if (a.kind != b.kind || a.operands != b.operands || a.results != b.results ||
      !(a.attrs == b.attrs) || a.regions.size() != b.regions.size())
    return false;
  for (size_t r = 0; r < a.regions.size(); ++r)
    if (a.regions[r].args != b.regions[r].args) return false;
  for (size_t i = 0; i < a.results.size(); ++i)
    if (a.results[i] >= fa.values.size() || a.results[i] >= fb.values.size() ||
        !(fa.type(a.results[i]) == fb.type(b.results[i])))
      return false;
  return true;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    const size_t start = line.find_first_not_of(' ');
    lines.push_back(start == std::string::npos ? "" : line.substr(start));
  }
  return lines;
}

// Throws when the two traces differ, at the first op that differs.
void compare(const ir::Function& first, const ir::Function& second, const char* which_first,
             const char* which_second) {
  const std::vector<const ir::Op*> a = ops_in_order(first), b = ops_in_order(second);
  const size_t n = std::min(a.size(), b.size());
  size_t at = 0;
  while (at < n && same_op(first, *a[at], second, *b[at])) ++at;
  const bool ops_agree = at == n && a.size() == b.size();
  if (ops_agree && first.values.size() == second.values.size() && first.vars == second.vars) return;
  // Where: the user's line of the op that differs, in the newer trace when it has one.
  const SourceLoc loc = at < b.size() ? b[at]->loc : at < a.size() ? a[at]->loc : second.loc;
  // What: the first line of the printed IR that differs (values are numbered as printed, so this
  // is the op as a reader of TESSERA_DUMP=ir would see it).
  const std::vector<std::string> la = lines_of(ir::print(first)), lb = lines_of(ir::print(second));
  size_t line = 0;
  while (line < la.size() && line < lb.size() && la[line] == lb[line]) ++line;
  const std::string ta = line < la.size() ? "'" + la[line] + "'" : "nothing";
  const std::string tb = line < lb.size() ? "'" + lb[line] + "'" : "nothing";
  fail_at<KernelError>(loc, "kernel '", second.name,
                       "' traced differently for one specialization: the ", which_first, " has ",
                       ta, " where the ", which_second, " has ", tb, kDependsOnHiddenState);
}

// Runs a trace after one that succeeded: a trace that now fails is a difference too (a tile kept
// in a static names a value of the earlier trace's function, which this one does not define).
ir::Function trace_again(const std::function<ir::Function()>& trace, const std::string& kernel,
                         const char* which_first, const char* which_second) {
  try {
    return trace();
  } catch (const KernelError& e) {
    fail<KernelError>("kernel '", kernel, "' traced differently for one specialization: the ",
                      which_first, " succeeded where the ", which_second, " failed with \"",
                      e.what(), "\"", kDependsOnHiddenState);
  }
}

}  // namespace

ir::Function trace_twice(const std::function<ir::Function()>& trace) {
  ir::Function first = trace();
  const ir::Function second = trace_again(trace, first.name, "first trace", "second trace");
  compare(first, second, "first trace", "second trace");
  return first;
}

void recheck_trace(const ir::Function& recorded, const std::function<ir::Function()>& trace) {
  const char* const recorded_name = "trace this specialization was compiled from";
  const char* const fresh_name = "trace of this launch (TESSERA_CHECK=trace)";
  compare(recorded, trace_again(trace, recorded.name, recorded_name, fresh_name), recorded_name,
          fresh_name);
}

}  // namespace tessera::tile
