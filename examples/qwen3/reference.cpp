// The double-precision reference: the same decoder written as plain loops over the same weights,
// recomputing every position from scratch (no cache), to check the engine's logits against.
#include <cmath>

#include "model.hpp"

namespace qwen3 {
namespace {

using Matrix = std::vector<double>;  // row-major

// x [n, in] @ w [in, out].
Matrix matmul(const Matrix& x, const std::vector<float>& w, int64_t n, int64_t in, int64_t out) {
  Matrix y(static_cast<size_t>(n * out), 0.0);
  for (int64_t r = 0; r < n; ++r)
    for (int64_t i = 0; i < in; ++i)
      for (int64_t c = 0; c < out; ++c) y[r * out + c] += x[r * in + i] * w[i * out + c];
  return y;
}

// RMSNorm of each run of w.size() elements.
Matrix rms_norm(const Matrix& x, const std::vector<float>& w, double eps) {
  Matrix y(x.size());
  const size_t d = w.size();
  for (size_t r = 0; r < x.size() / d; ++r) {
    double ss = 0;
    for (size_t i = 0; i < d; ++i) ss += x[r * d + i] * x[r * d + i];
    const double s = 1 / std::sqrt(ss / static_cast<double>(d) + eps);
    for (size_t i = 0; i < d; ++i) y[r * d + i] = x[r * d + i] * s * w[i];
  }
  return y;
}

// Half-split RoPE of x [n, heads, dim] at positions 0 .. n-1.
void rope(Matrix& x, int64_t n, int64_t heads, int64_t dim, double theta) {
  const int64_t half = dim / 2;
  for (int64_t t = 0; t < n; ++t)
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t i = 0; i < half; ++i) {
        const double angle = static_cast<double>(t) * std::pow(theta, -2.0 * i / dim);
        double& a = x[(t * heads + h) * dim + i];
        double& b = x[(t * heads + h) * dim + i + half];
        const double ra = a * std::cos(angle) - b * std::sin(angle);
        const double rb = b * std::cos(angle) + a * std::sin(angle);
        a = ra, b = rb;
      }
}

}  // namespace

std::vector<double> reference_logits(const Config& c, const HostWeights& w,
                                     const std::vector<int32_t>& tokens) {
  const int64_t n = static_cast<int64_t>(tokens.size()), d = c.head_dim;
  const int64_t group = c.heads / c.kv_heads;
  Matrix h(static_cast<size_t>(n * c.hidden));
  for (int64_t t = 0; t < n; ++t)
    for (int64_t i = 0; i < c.hidden; ++i) h[t * c.hidden + i] = w.embed[tokens[t] * c.hidden + i];
  for (const HostLayer& L : w.layers) {
    const Matrix x = rms_norm(h, L.input_norm, c.eps);
    Matrix q = rms_norm(matmul(x, L.q, n, c.hidden, c.heads * d), L.q_norm, c.eps);
    Matrix k = rms_norm(matmul(x, L.k, n, c.hidden, c.kv_heads * d), L.k_norm, c.eps);
    const Matrix v = matmul(x, L.v, n, c.hidden, c.kv_heads * d);
    rope(q, n, c.heads, d, c.rope_theta);
    rope(k, n, c.kv_heads, d, c.rope_theta);
    Matrix attn(static_cast<size_t>(n * c.heads * d), 0.0);
    for (int64_t t = 0; t < n; ++t)
      for (int64_t hq = 0; hq < c.heads; ++hq) {
        const int64_t hk = hq / group;
        std::vector<double> p(static_cast<size_t>(t + 1));
        double m = -INFINITY, sum = 0;
        for (int64_t j = 0; j <= t; ++j) {
          double dot = 0;
          for (int64_t e = 0; e < d; ++e)
            dot += q[(t * c.heads + hq) * d + e] * k[(j * c.kv_heads + hk) * d + e];
          m = std::max(m, p[j] = dot / std::sqrt(static_cast<double>(d)));
        }
        for (double& e : p) sum += (e = std::exp(e - m));
        for (int64_t j = 0; j <= t; ++j)
          for (int64_t e = 0; e < d; ++e)
            attn[(t * c.heads + hq) * d + e] += p[j] / sum * v[(j * c.kv_heads + hk) * d + e];
      }
    const Matrix o = matmul(attn, L.o, n, c.heads * d, c.hidden);
    for (size_t i = 0; i < h.size(); ++i) h[i] += o[i];
    const Matrix x2 = rms_norm(h, L.post_norm, c.eps);
    const Matrix g = matmul(x2, L.gate, n, c.hidden, c.intermediate);
    Matrix u = matmul(x2, L.up, n, c.hidden, c.intermediate);
    for (size_t i = 0; i < u.size(); ++i) u[i] *= g[i] / (1 + std::exp(-g[i]));
    const Matrix down = matmul(u, L.down, n, c.intermediate, c.hidden);
    for (size_t i = 0; i < h.size(); ++i) h[i] += down[i];
  }
  const Matrix x = rms_norm(h, w.final_norm, c.eps);
  Matrix logits(static_cast<size_t>(n * c.vocab), 0.0);
  for (int64_t t = 0; t < n; ++t)
    for (int64_t v = 0; v < c.vocab; ++v)
      for (int64_t i = 0; i < c.hidden; ++i)
        logits[t * c.vocab + v] += x[t * c.hidden + i] * w.embed[v * c.hidden + i];
  return logits;
}

}  // namespace qwen3
