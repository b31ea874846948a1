// Reading a Hugging Face Qwen3 directory (checkpoint.hpp).
#include "checkpoint.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "json.hpp"
#include "safetensors.hpp"

namespace qwen3 {

using tessera::UsageError;

namespace {

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw UsageError(path + ": cannot open the file (is this a model directory?)");
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Hugging Face stores a linear layer's weight [out, in]; the engine's GEMM reads [in, out].
std::vector<float> transposed(const std::vector<float>& w, int64_t out, int64_t in) {
  std::vector<float> t(w.size());
  for (int64_t o = 0; o < out; ++o)
    for (int64_t i = 0; i < in; ++i) t[i * out + o] = w[o * in + i];
  return t;
}

}  // namespace

Config read_config(const std::string& dir, int64_t max_positions) {
  const std::string path = dir + "/config.json";
  const json::Value v = json::parse(read_text(path), path);
  auto field = [&](const char* key) -> const json::Value& {
    const json::Value* f = v.find(key);
    if (!f) throw UsageError(path + ": no \"" + key + "\"");
    return *f;
  };
  auto integer = [&](const char* key) { return field(key).integer(path + ": " + key); };
  if (const json::Value* type = v.find("model_type");
      type && type->string(path + ": model_type") != "qwen3")
    throw UsageError(path + ": model_type is \"" + type->string("model_type") +
                     "\"; this engine runs qwen3");
  auto refuse_if = [&](const char* key, bool bad, const char* why) {
    if (bad) throw UsageError(path + ": \"" + key + "\" " + why + "; this engine does not run it");
  };
  const json::Value* tied = v.find("tie_word_embeddings");
  refuse_if("tie_word_embeddings", tied && !tied->boolean("tie_word_embeddings"),
            "is false (a separate LM head)");
  const json::Value* bias = v.find("attention_bias");
  refuse_if("attention_bias", bias && bias->boolean("attention_bias"), "is true");
  const json::Value* scaling = v.find("rope_scaling");
  refuse_if("rope_scaling", scaling && !scaling->is_null(), "is set");
  const json::Value* sliding = v.find("use_sliding_window");
  refuse_if("use_sliding_window", sliding && sliding->boolean("use_sliding_window"), "is true");
  if (const json::Value* act = v.find("hidden_act"))
    refuse_if("hidden_act", act->string("hidden_act") != "silu", "is not silu");
  Config c;
  c.vocab = integer("vocab_size");
  c.hidden = integer("hidden_size");
  c.intermediate = integer("intermediate_size");
  c.layers = integer("num_hidden_layers");
  c.heads = integer("num_attention_heads");
  c.kv_heads = integer("num_key_value_heads");
  c.head_dim = v.find("head_dim") ? integer("head_dim") : c.hidden / c.heads;
  c.max_positions = std::min(integer("max_position_embeddings"), max_positions);
  // Older configs give rope_theta at the top; newer transformers write it in rope_parameters.
  if (const json::Value* theta = v.find("rope_theta")) {
    c.rope_theta = theta->number("rope_theta");
  } else if (const json::Value* rp = v.find("rope_parameters"); rp && rp->find("rope_theta")) {
    c.rope_theta = rp->find("rope_theta")->number("rope_parameters.rope_theta");
  }
  c.eps = static_cast<float>(field("rms_norm_eps").number("rms_norm_eps"));
  if (c.heads % c.kv_heads != 0)
    throw UsageError(path + ": num_attention_heads is not a multiple of num_key_value_heads");
  return c;
}

HostWeights read_weights(const std::string& dir, const Config& c) {
  const Safetensors file(dir + "/model.safetensors");
  const int64_t q_out = c.heads * c.head_dim, kv_out = c.kv_heads * c.head_dim;
  HostWeights w;
  w.embed = file.floats("model.embed_tokens.weight", {c.vocab, c.hidden});
  for (int64_t l = 0; l < c.layers; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    auto vec = [&](const std::string& name, int64_t n) { return file.floats(p + name, {n}); };
    auto linear = [&](const std::string& name, int64_t in, int64_t out) {
      return transposed(file.floats(p + name, {out, in}), out, in);
    };
    HostLayer L;
    L.input_norm = vec("input_layernorm.weight", c.hidden);
    L.q = linear("self_attn.q_proj.weight", c.hidden, q_out);
    L.k = linear("self_attn.k_proj.weight", c.hidden, kv_out);
    L.v = linear("self_attn.v_proj.weight", c.hidden, kv_out);
    L.q_norm = vec("self_attn.q_norm.weight", c.head_dim);
    L.k_norm = vec("self_attn.k_norm.weight", c.head_dim);
    L.o = linear("self_attn.o_proj.weight", q_out, c.hidden);
    L.post_norm = vec("post_attention_layernorm.weight", c.hidden);
    L.gate = linear("mlp.gate_proj.weight", c.hidden, c.intermediate);
    L.up = linear("mlp.up_proj.weight", c.hidden, c.intermediate);
    L.down = linear("mlp.down_proj.weight", c.intermediate, c.hidden);
    w.layers.push_back(std::move(L));
  }
  w.final_norm = file.floats("model.norm.weight", {c.hidden});
  return w;
}

}  // namespace qwen3
