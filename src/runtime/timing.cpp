// The kernel-independent part of time_launches (include/tessera/timing.hpp): calibration,
// warm-up, the timed rounds and their median, and the L2 flush.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <optional>

#include "tessera/runtime/kernel.hpp"
#include "tessera/timing.hpp"

namespace tessera {

namespace {

using Clock = std::chrono::steady_clock;

// Writes every element of a tile block's tile: the flush's whole buffer passes through the L2,
// evicting what the kernel being timed left there.
TESSERA_KERNEL(tessera_l2_flush, tile::Out<int32_t, 1> z) {
  z.store(tile::Tile<int32_t>::zeros(z.shape()));
};

// Two flush buffers used in turn, so that a flush never waits for the one just before it (only
// for the one before that, which the launch between them has long finished).
class L2Flusher {
 public:
  L2Flusher(Device device, int64_t bytes) {
    const int64_t elements = std::max<int64_t>(1, bytes / int64_t{sizeof(int32_t)});
    for (auto& buffer : idle_)
      buffer.emplace(zeros<int32_t>({elements}, device).partition({kTile}));
  }
  void enqueue() {
    Partition<int32_t, 1> buffer = pending_[next_] ? std::get<0>(std::move(*pending_[next_]).sync())
                                                   : std::move(*idle_[next_]);
    pending_[next_].emplace(tessera_l2_flush(std::move(buffer)).async());
    next_ ^= 1;
  }

 private:
  static constexpr int64_t kTile = 8192;
  using Pending = decltype(tessera_l2_flush(std::declval<Partition<int32_t, 1>>()).async());
  std::optional<Partition<int32_t, 1>> idle_[2];  // each buffer before its first flush
  std::optional<Pending> pending_[2];
  size_t next_ = 0;
};

template <class F>
double ms_of(int times, F&& f) {
  const auto start = Clock::now();
  for (int i = 0; i < times; ++i) f();
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// The median time per call of `f` over `rounds` rounds of `per_round` calls, after `warmup`
// untimed rounds; every round's time per call into *each.
template <class F>
double median_per_call(F&& f, int per_round, int warmup, int rounds, std::vector<double>* each) {
  for (int w = 0; w < warmup; ++w) ms_of(per_round, f);
  each->clear();
  for (int r = 0; r < rounds; ++r) each->push_back(ms_of(per_round, f) / per_round);
  return median(*each);
}

void check_options(const TimingOptions& o) {
  auto bad = [](const char* name, auto value, const char* rule) {
    fail<UsageError>("time_launches: TimingOptions::", name, " is ", value, "; it must be ", rule);
  };
  if (o.rounds < 1) bad("rounds", o.rounds, "at least 1");
  if (o.warmup_rounds < 0) bad("warmup_rounds", o.warmup_rounds, "0 or more");
  if (o.launches_per_round < 0)
    bad("launches_per_round", o.launches_per_round, "0 (calibrate) or more");
  if (!(o.round_ms > 0)) bad("round_ms", o.round_ms, "more than 0");
  if (o.flush_l2 && o.flush_bytes < 1)
    bad("flush_bytes", o.flush_bytes, "at least 1 with flush_l2");
}

}  // namespace

namespace runtime::timing {

Timing time_steps(const std::function<void()>& step, Device device, const TimingOptions& o) {
  check_options(o);
  std::optional<L2Flusher> flusher;
  if (o.flush_l2) flusher.emplace(device, o.flush_bytes);
  auto one = [&] {
    if (flusher) flusher->enqueue();
    step();
  };

  int per_round = o.launches_per_round;
  if (per_round == 0) {
    one();  // the first launch compiles the kernel, or loads it: not a sample
    // Double the batch until it lasts a quarter of a round, then scale it to a round.
    constexpr int kMax = 1 << 20;
    for (int batch = 1;; batch *= 2) {
      const double ms = ms_of(batch, one);
      if (ms >= o.round_ms / 4 || batch >= kMax) {
        const double per = std::max(ms / batch, 1e-6);
        per_round = static_cast<int>(std::clamp(std::ceil(o.round_ms / per), 1.0, double{kMax}));
        break;
      }
    }
  }

  Timing t;
  t.launches_per_round = per_round;
  t.median_ms = median_per_call(one, per_round, o.warmup_rounds, o.rounds, &t.round_ms);
  if (flusher) {
    // The flushes alone, the same way. The first (untimed) round also waits out the launches
    // still queued from the timed rounds.
    std::vector<double> flush_rounds;
    t.flush_ms = median_per_call([&] { flusher->enqueue(); }, per_round,
                                 std::max(1, o.warmup_rounds), o.rounds, &flush_rounds);
    for (double& r : t.round_ms) r = std::max(0.0, r - t.flush_ms);
    t.median_ms = median(t.round_ms);
  }
  t.min_ms = *std::min_element(t.round_ms.begin(), t.round_ms.end());
  t.max_ms = *std::max_element(t.round_ms.begin(), t.round_ms.end());
  return t;
}

}  // namespace runtime::timing

std::string Timing::str() const {
  char text[200];
  std::snprintf(text, sizeof text,
                "%.4g ms per launch (median of %zu rounds of %d launches; %.4g to %.4g%s)",
                median_ms, round_ms.size(), launches_per_round, min_ms, max_ms,
                flush_ms > 0 ? "; L2 flushed before each" : "");
  return text;
}

}  // namespace tessera
