#include "grid_dependency_check.hpp"

#include <regex>
#include <set>
#include <sstream>
#include <vector>

namespace tessera::test {
namespace {

// The lines of the entry's body: from ".entry <name>(" to the "}" that closes it (PTX puts the
// closing brace of a function alone at the start of a line).
std::vector<std::string> entry_lines(const std::string& ptx, const std::string& entry) {
  std::vector<std::string> lines;
  const size_t start = ptx.find(".entry " + entry + "(");
  if (start == std::string::npos) return lines;
  std::istringstream in(ptx.substr(start));
  std::string l;
  bool body = false;
  while (std::getline(in, l)) {
    if (!body) {
      body = l.rfind('{', 0) == 0;
      continue;
    }
    if (l.rfind('}', 0) == 0) break;
    lines.push_back(l);
  }
  return lines;
}

// The instruction of a line without its predicate ("@%p1 ld.global.f32 ..." -> "ld.global.f32").
std::string opcode(const std::string& line) {
  std::istringstream in(line);
  std::string w;
  in >> w;
  if (!w.empty() && w[0] == '@') in >> w;
  return w;
}

bool starts(const std::string& s, const char* p) {
  return s.rfind(p, 0) == 0;
}

// Whether an instruction may touch global memory: loads, stores, atomics and reductions, async and
// bulk (TMA) copies, prefetches, in the global state space or in the generic one (which may point
// there); and calls, whose callee may. Shared, local, param and const accesses may not, nor may a
// tensor-map prefetch (it reads the kernel's parameter).
bool may_touch_global(const std::string& op) {
  if (op.empty() || op[0] == '.' || op[0] == '$' || op[0] == '/' || op[0] == '{' || op[0] == '}')
    return false;
  if (starts(op, "call")) return true;
  static const char* const kMemory[] = {"ld.",      "ldu.",     "st.",       "atom.",
                                        "red.",     "cp.async", "cp.reduce", "prefetch",
                                        "multimem", "tex.",     "suld",      "sust"};
  bool memory = false;
  for (const char* m : kMemory) memory = memory || starts(op, m);
  if (!memory) return false;
  if (starts(op, "prefetch.tensormap") || starts(op, "prefetch.param")) return false;
  // A bulk prefetch into L2 (the prefetch op): a hint that moves no data into the thread, and
  // L2 is the point of coherence, so lines it fetches early still take the earlier grids' writes.
  if (starts(op, "cp.async.bulk.prefetch.L2.global")) return false;
  for (const char* space : {".shared", ".local", ".param", ".const"})
    if (op.find(space) != std::string::npos && op.find(".global") == std::string::npos)
      // cp.async.bulk.shared::cluster.global... copies from global: its source space counts.
      return false;
  return true;
}

}  // namespace

std::string grid_dependency_violation(const std::string& ptx, const std::string& entry) {
  const std::vector<std::string> lines = entry_lines(ptx, entry);
  if (lines.empty()) return "no entry " + entry + " in the PTX";
  size_t wait = lines.size(), waits = 0, launch = lines.size();
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string op = opcode(lines[i]);
    if (op == "griddepcontrol.wait;" || op == "griddepcontrol.wait") {
      ++waits;
      if (wait == lines.size()) wait = i;
    }
    if (starts(op, "griddepcontrol.launch_dependents") && launch == lines.size()) launch = i;
  }
  if (waits != 1) return "the entry has " + std::to_string(waits) + " griddepcontrol.wait";
  if (launch < wait) return "griddepcontrol.launch_dependents comes before griddepcontrol.wait";
  if (launch == lines.size()) return "the entry has no griddepcontrol.launch_dependents";
  // Labels defined before the wait: a branch before it must stay there, else it could reach a
  // global access past the wait without executing it.
  std::set<std::string> labels_before;
  for (size_t i = 0; i < wait; ++i) {
    const std::string op = opcode(lines[i]);
    if (!op.empty() && op.back() == ':') labels_before.insert(op.substr(0, op.size() - 1));
  }
  static const std::regex branch(R"(\bbra(\.uni)?\s+([$\w]+);)");
  for (size_t i = 0; i < wait; ++i) {
    const std::string op = opcode(lines[i]);
    if (may_touch_global(op)) return "before griddepcontrol.wait: " + lines[i];
    std::smatch m;
    if (std::regex_search(lines[i], m, branch) && !labels_before.count(m[2].str()))
      return "a branch before griddepcontrol.wait reaches past it: " + lines[i];
  }
  return "";
}

std::string before_wait(const std::string& ptx, const std::string& entry) {
  std::string out;
  for (const std::string& l : entry_lines(ptx, entry)) {
    if (l.find("griddepcontrol.wait") != std::string::npos) break;
    out += l + "\n";
  }
  return out;
}

}  // namespace tessera::test
