// The node plan of a graph's CUDA graph (runtime/graph_plan.hpp), on the host: edges only where
// two launches share a storage and one of them writes it, no edge another chain of edges implies,
// and one error-report copy per reporting kernel, after all its launches.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "runtime/graph_plan.hpp"

namespace tessera::test {
namespace {

using runtime::GraphPlan;
using runtime::GraphPlanStep;
using runtime::plan_graph;

using After = std::vector<std::vector<size_t>>;
using Launches = std::vector<size_t>;

// Distinct addresses standing for kernels and storages.
int kernel_a, kernel_b, kernel_c;
int x, y, z, w;

GraphPlanStep step(const void* kernel, bool reports,
                   std::vector<std::pair<const void*, bool>> uses) {
  return {kernel, reports, std::move(uses)};
}

TEST(GraphPlan, APingPongChainIsOneEdgePerLaunch) {
  // bench/launch's graph: z = f(x), x = f(z), ... each launch reads what the one before wrote
  // and writes what it read.
  std::vector<GraphPlanStep> steps;
  for (int i = 0; i < 4; ++i)
    steps.push_back(step(&kernel_a, false, {{i % 2 ? &x : &z, true}, {i % 2 ? &z : &x, false}}));
  const GraphPlan plan = plan_graph(steps);
  EXPECT_EQ(plan.after, (After{{}, {0}, {1}, {2}}));
  EXPECT_EQ(plan.last, (Launches{3}));
  EXPECT_TRUE(plan.reports.empty());
}

TEST(GraphPlan, LaunchesThatShareNoWrittenStorageHaveNoEdge) {
  // Two writers of different storages reading the same input, then a launch reading both.
  const std::vector<GraphPlanStep> steps = {
      step(&kernel_a, false, {{&y, true}, {&x, false}}),
      step(&kernel_b, false, {{&z, true}, {&x, false}}),
      step(&kernel_c, false, {{&w, true}, {&y, false}, {&z, false}}),
  };
  const GraphPlan plan = plan_graph(steps);
  EXPECT_EQ(plan.after, (After{{}, {}, {0, 1}}));
  EXPECT_EQ(plan.last, (Launches{2}));
}

TEST(GraphPlan, EachHazardKindOrdersTheLaunches) {
  // Read after write, write after read, write after write.
  const std::vector<GraphPlanStep> raw = {step(&kernel_a, false, {{&y, true}}),
                                          step(&kernel_b, false, {{&z, true}, {&y, false}})};
  EXPECT_EQ(plan_graph(raw).after, (After{{}, {0}}));
  const std::vector<GraphPlanStep> war = {step(&kernel_a, false, {{&z, true}, {&y, false}}),
                                          step(&kernel_b, false, {{&y, true}})};
  EXPECT_EQ(plan_graph(war).after, (After{{}, {0}}));
  const std::vector<GraphPlanStep> waw = {step(&kernel_a, false, {{&y, true}}),
                                          step(&kernel_b, false, {{&y, true}})};
  EXPECT_EQ(plan_graph(waw).after, (After{{}, {0}}));
  // Two readers of one storage are not ordered; the writer after them follows both.
  const std::vector<GraphPlanStep> readers = {step(&kernel_a, false, {{&z, true}, {&x, false}}),
                                              step(&kernel_b, false, {{&w, true}, {&x, false}}),
                                              step(&kernel_c, false, {{&x, true}})};
  const GraphPlan plan = plan_graph(readers);
  EXPECT_EQ(plan.after, (After{{}, {}, {0, 1}}));
  EXPECT_EQ(plan.last, (Launches{2}));
}

TEST(GraphPlan, AnEdgeThatAChainAlreadyImpliesIsLeftOut) {
  // 2 reads what 0 wrote, but it follows 1, which follows 0.
  const std::vector<GraphPlanStep> steps = {
      step(&kernel_a, false, {{&y, true}}),
      step(&kernel_b, false, {{&z, true}, {&y, false}}),
      step(&kernel_c, false, {{&w, true}, {&y, false}, {&z, false}}),
  };
  EXPECT_EQ(plan_graph(steps).after, (After{{}, {0}, {1}}));
}

TEST(GraphPlan, AStorageBothReadAndWrittenByALaunchIsWritten) {
  // An In and an Out of one storage (views of it): the next reader follows that launch.
  const std::vector<GraphPlanStep> steps = {
      step(&kernel_a, false, {{&y, false}, {&y, true}}),
      step(&kernel_b, false, {{&z, true}, {&y, false}}),
  };
  EXPECT_EQ(plan_graph(steps).after, (After{{}, {0}}));
}

TEST(GraphPlan, EachReportingKernelHasOneReportAfterAllItsLaunches) {
  const std::vector<GraphPlanStep> steps = {
      step(&kernel_a, true, {{&y, true}}), step(&kernel_b, false, {{&z, true}}),
      step(&kernel_c, true, {{&w, true}}), step(&kernel_a, true, {{&x, true}}),
      step(&kernel_a, true, {{&y, true}})};
  const GraphPlan plan = plan_graph(steps);
  ASSERT_EQ(plan.reports.size(), 2u);
  EXPECT_EQ(plan.reports[0].kernel, &kernel_a);
  EXPECT_EQ(plan.reports[0].launches, (Launches{0, 3, 4}));
  EXPECT_EQ(plan.reports[1].kernel, &kernel_c);
  EXPECT_EQ(plan.reports[1].launches, (Launches{2}));
  // The copies follow the graph's last launches: every launch that no other follows.
  EXPECT_EQ(plan.after, (After{{}, {}, {}, {}, {0}}));
  EXPECT_EQ(plan.last, (Launches{1, 2, 3, 4}));
}

using Edges = std::vector<std::pair<size_t, size_t>>;

// The edges of a chain of `nodes` after `edits`.
Edges edited_chain(size_t nodes, const runtime::GraphEdits& edits) {
  Edges edges;
  for (size_t i = 0; i + 1 < nodes; ++i) edges.emplace_back(i, i + 1);
  for (const auto& e : edits.removed) {
    auto it = std::find(edges.begin(), edges.end(), e);
    EXPECT_NE(it, edges.end()) << "removes an edge the chain does not have";
    if (it != edges.end()) edges.erase(it);
  }
  edges.insert(edges.end(), edits.added.begin(), edits.added.end());
  std::sort(edges.begin(), edges.end());
  return edges;
}

TEST(GraphEdits, AChainPlanEditsNothing) {
  std::vector<GraphPlanStep> steps;
  for (int i = 0; i < 4; ++i)
    steps.push_back(step(&kernel_a, true, {{i % 2 ? &x : &z, true}, {i % 2 ? &z : &x, false}}));
  const runtime::GraphEdits edits = runtime::graph_edits(plan_graph(steps), 4 + 2);
  EXPECT_TRUE(edits.removed.empty());
  EXPECT_TRUE(edits.added.empty());
}

TEST(GraphEdits, TwoChainsBecomeTwoBranchesThatTheReportCopyJoins) {
  // Launches 0 -> 1 and 2 -> 3 share no written storage; nodes 4 and 5 copy and clear a report.
  const std::vector<GraphPlanStep> steps = {
      step(&kernel_a, true, {{&y, true}, {&x, false}}),
      step(&kernel_a, true, {{&z, true}, {&y, false}}),
      step(&kernel_b, false, {{&w, true}, {&x, false}}),
      step(&kernel_b, false, {{&kernel_c, true}, {&w, false}}),
  };
  const runtime::GraphEdits edits = runtime::graph_edits(plan_graph(steps), 6);
  EXPECT_EQ(edits.removed, (Edges{{1, 2}}));  // (3, 4) stays: the plan has it too
  EXPECT_EQ(edits.added, (Edges{{1, 4}}));
  EXPECT_EQ(edited_chain(6, edits), (Edges{{0, 1}, {1, 4}, {2, 3}, {3, 4}, {4, 5}}));
}

TEST(GraphEdits, IndependentLaunchesWithoutReportsKeepNoEdge) {
  const std::vector<GraphPlanStep> steps = {step(&kernel_a, false, {{&y, true}, {&x, false}}),
                                            step(&kernel_b, false, {{&z, true}, {&x, false}}),
                                            step(&kernel_c, false, {{&w, true}})};
  EXPECT_EQ(edited_chain(3, runtime::graph_edits(plan_graph(steps), 3)), Edges{});
}

TEST(GraphPlan, AnEmptyGraphHasNothing) {
  const GraphPlan plan = plan_graph({});
  EXPECT_TRUE(plan.after.empty());
  EXPECT_TRUE(plan.last.empty());
  EXPECT_TRUE(plan.reports.empty());
}

}  // namespace
}  // namespace tessera::test
