// The CPU backend (tessera/backend/cpu/backend.hpp). Its compile makes nothing: the interpreter
// runs the checked IR itself. Its start queues the launch on the runtime's CPU workers, which is
// why it lives here, above the interpreter's layer.
#include "tessera/backend/cpu/backend.hpp"

#include <exception>
#include <memory>
#include <utility>

#include "block_pool.hpp"
#include "cpu_queue.hpp"
#include "tessera/backend/cpu/interpreter.hpp"
#include "tessera/runtime/launch.hpp"

namespace tessera::backend::cpu {

namespace {

using runtime::Completion;
using runtime::PoolAllocator;
using runtime::PooledNew;

// A CPU launch on its way to a worker. Its block comes from a pool and the queued function holds
// only a pointer to it (small enough for std::function to keep inline), so that queuing a launch
// allocates nothing once warm.
struct CpuLaunchJob : PooledNew<CpuLaunchJob> {
  std::shared_ptr<const ir::Function> fn;
  LaunchArgs args;
  std::vector<std::shared_ptr<Completion>> readers;
  std::shared_ptr<Completion> done;

  // The argument list's memory goes to the next launch (SpareVectors).
  ~CpuLaunchJob() { runtime::SpareVectors<ArgValue>::give(std::move(args.args)); }

  // Queues the job on the CPU backend's workers.
  static void enqueue(std::shared_ptr<const ir::Function> fn, LaunchArgs args,
                      std::vector<std::shared_ptr<Completion>> readers,
                      std::shared_ptr<Completion> done) {
    auto* job =
        new CpuLaunchJob{{}, std::move(fn), std::move(args), std::move(readers), std::move(done)};
    try {
      runtime::cpu_enqueue([job] { std::unique_ptr<CpuLaunchJob>(job)->run(); });
    } catch (...) {  // not queued
      delete job;
      throw;
    }
  }
  void run() {
    for (const std::shared_ptr<Completion>& r : readers) r->wait_quietly();
    std::exception_ptr error = done->predecessor_error();
    if (!error) {
      try {
        cpu::run(*fn, args);
      } catch (...) {
        error = std::current_exception();
      }
    }
    // Given back before the launch is done: the next launch after a wait for this one finds it.
    runtime::SpareVectors<ArgValue>::give(std::move(args.args));
    done->finish(error);
  }
};

class CpuBackend final : public Backend {
 public:
  std::string_view name() const override { return "cpu"; }
  // The interpreter reads any strides and alignment: nothing to specialize on.
  bool specializes_on_tensors() const override { return false; }
  Loaded compile(const KernelToCompile&) const override { return {}; }
  // The job waits for the readers it follows (they only have to finish), then for the writers
  // (whose failure is this launch's), then runs. The IR and the argument values travel with it;
  // the storages stay alive since each one waits for its launches before it is freed. (Readers
  // are few and rare on a repeated launch: moved, a new list is made only then.)
  std::shared_ptr<Completion> start(LaunchToStart&& l) const override {
    auto done = std::allocate_shared<Completion>(PoolAllocator<Completion>{}, std::move(l.label));
    done->follow(l.writers);
    CpuLaunchJob::enqueue(std::move(l.fn), std::move(l.args), std::move(l.readers), done);
    return done;
  }
};

}  // namespace

const Backend& backend() {
  static const CpuBackend b;
  return b;
}

}  // namespace tessera::backend::cpu
