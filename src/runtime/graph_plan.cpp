// The node plan of a CUDA graph (graph_plan.hpp).
#include "graph_plan.hpp"

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <unordered_map>

namespace tessera::runtime {

namespace {

// The launches a storage's next user may have to follow.
struct Users {
  bool written = false;
  size_t writer = 0;            // the last launch that wrote it
  std::vector<size_t> readers;  // the launches that read it since
};

// Launches as bits: which ones a launch follows, directly or through others.
class Bits {
 public:
  explicit Bits(size_t n) : words_((n + 63) / 64, 0) {}
  void set(size_t i) { words_[i / 64] |= uint64_t{1} << (i % 64); }
  bool test(size_t i) const { return (words_[i / 64] >> (i % 64)) & 1; }
  void add(const Bits& o) {
    for (size_t w = 0; w < words_.size(); ++w) words_[w] |= o.words_[w];
  }

 private:
  std::vector<uint64_t> words_;
};

}  // namespace

GraphPlan plan_graph(std::span<const GraphPlanStep> steps) {
  const size_t n = steps.size();
  GraphPlan plan;
  plan.after.resize(n);
  std::unordered_map<const void*, Users> users;
  std::vector<Bits> ancestors(n, Bits(n));
  std::vector<bool> followed(n, false);
  for (size_t i = 0; i < n; ++i) {
    // The storage's uses of this launch, merged (an In and an Out of one storage write it).
    std::vector<std::pair<const void*, bool>> uses;
    for (const auto& [s, w] : steps[i].uses) {
      auto it = std::find_if(uses.begin(), uses.end(), [&](const auto& u) { return u.first == s; });
      if (it == uses.end())
        uses.emplace_back(s, w);
      else
        it->second = it->second || w;
    }
    std::vector<size_t> hazards;
    for (const auto& [s, w] : uses) {
      auto found = users.find(s);
      if (found == users.end()) continue;
      const Users& u = found->second;
      if (u.written) hazards.push_back(u.writer);                                // after a write
      if (w) hazards.insert(hazards.end(), u.readers.begin(), u.readers.end());  // before a write
    }
    std::sort(hazards.begin(), hazards.end());
    hazards.erase(std::unique(hazards.begin(), hazards.end()), hazards.end());
    // Only those no other hazard already follows: one edge a link of a chain.
    for (size_t j : hazards) {
      const bool implied = std::any_of(hazards.begin(), hazards.end(),
                                       [&](size_t k) { return k != j && ancestors[k].test(j); });
      if (implied) continue;
      plan.after[i].push_back(j);
      followed[j] = true;
      ancestors[i].add(ancestors[j]);
      ancestors[i].set(j);
    }
    for (const auto& [s, w] : uses) {
      Users& u = users[s];
      if (w) {
        u.written = true;
        u.writer = i;
        u.readers.clear();
      } else {
        u.readers.push_back(i);
      }
    }
    if (steps[i].reports) {
      auto r =
          std::find_if(plan.reports.begin(), plan.reports.end(),
                       [&](const GraphPlan::Report& x) { return x.kernel == steps[i].kernel; });
      if (r == plan.reports.end()) r = plan.reports.insert(r, {steps[i].kernel, {}});
      r->launches.push_back(i);
    }
  }
  for (size_t i = 0; i < n; ++i)
    if (!followed[i]) plan.last.push_back(i);
  return plan;
}

GraphEdits graph_edits(const GraphPlan& plan, size_t nodes) {
  const size_t launches = plan.after.size();
  GraphEdits e;
  if (nodes < launches) return e;
  std::vector<std::pair<size_t, size_t>> chain, wanted;
  for (size_t i = 0; i + 1 < nodes && i < launches; ++i) chain.emplace_back(i, i + 1);
  for (size_t i = 0; i < launches; ++i)
    for (size_t j : plan.after[i]) wanted.emplace_back(j, i);
  if (nodes > launches)
    for (size_t j : plan.last) wanted.emplace_back(j, launches);
  // Only the differences: a plan that is a chain edits nothing.
  std::sort(wanted.begin(), wanted.end());
  std::set_difference(chain.begin(), chain.end(), wanted.begin(), wanted.end(),
                      std::back_inserter(e.removed));
  std::set_difference(wanted.begin(), wanted.end(), chain.begin(), chain.end(),
                      std::back_inserter(e.added));
  return e;
}

}  // namespace tessera::runtime
