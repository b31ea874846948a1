// examples/qwen3's readers: the JSON reader, the safetensors reader and a Hugging Face Qwen3
// directory, on files written here (the safetensors layout by hand: 8-byte header length, JSON
// header, raw little-endian data).
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "checkpoint.hpp"
#include "json.hpp"
#include "safetensors.hpp"

namespace {

using namespace tessera;
namespace fs = std::filesystem;

struct RawTensor {
  std::string dtype;
  std::vector<int64_t> shape;
  std::string bytes;
};

void write_safetensors(const std::string& path, const std::map<std::string, RawTensor>& tensors,
                       const std::string& header_override = "") {
  std::string header = "{\"__metadata__\":{\"format\":\"pt\"}", data;
  for (const auto& [name, t] : tensors) {
    header += ",\"" + name + "\":{\"dtype\":\"" + t.dtype + "\",\"shape\":[";
    for (size_t i = 0; i < t.shape.size(); ++i)
      header += (i ? "," : "") + std::to_string(t.shape[i]);
    header += "],\"data_offsets\":[" + std::to_string(data.size()) + "," +
              std::to_string(data.size() + t.bytes.size()) + "]}";
    data += t.bytes;
  }
  header += "}";
  if (!header_override.empty()) header = header_override;
  const uint64_t n = header.size();
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(&n), 8);
  out << header << data;
}

template <class U>
std::string bytes_of(const std::vector<U>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(U));
}

RawTensor bf16(const std::vector<float>& v, std::vector<int64_t> shape) {
  std::vector<uint16_t> b;
  for (float f : v) b.push_back(bfloat16(f).bits);
  return {"BF16", std::move(shape), bytes_of(b)};
}

std::string temp_dir(const std::string& name) {
  const fs::path p = fs::temp_directory_path() /
                     ("tessera_qwen3_" + name + "_" +
                      std::to_string(::testing::UnitTest::GetInstance()->random_seed()));
  fs::create_directories(p);
  return p.string();
}

TEST(JsonReader, ReadsTheValuesAModelDirectoryHolds) {
  const qwen3::json::Value v = qwen3::json::parse(
      R"({"a": [1, -2.5e3, true, false, null], "s": "x\"\\\n\u00e9\ud83d\ude00", "o": {"k": {}}})",
      "test");
  const auto& a = v.find("a")->array("a");
  ASSERT_EQ(a.size(), 5u);
  EXPECT_EQ(a[0].integer("a0"), 1);
  EXPECT_EQ(a[1].number("a1"), -2500.0);
  EXPECT_TRUE(a[2].boolean("a2"));
  EXPECT_FALSE(a[3].boolean("a3"));
  EXPECT_TRUE(a[4].is_null());
  EXPECT_EQ(v.find("s")->string("s"), "x\"\\\n\xc3\xa9\xf0\x9f\x98\x80");
  EXPECT_TRUE(v.find("o")->find("k")->object("k").empty());
  EXPECT_EQ(v.find("missing"), nullptr);
  EXPECT_EQ(a[1].integer("a1"), -2500);  // a whole number written with an exponent
  EXPECT_THROW((void)qwen3::json::parse("1.5", "t").integer("x"), UsageError);
  EXPECT_THROW((void)a[0].string("a0"), UsageError);
}

TEST(JsonReader, RefusesMalformedTextNamingWhereItStopped) {
  for (const char* bad :
       {"{\"a\": 1,}", "[1 2]", "\"open", "{\"a\" 1}", "tru", "{} x", "\"\\q\""}) {
    try {
      (void)qwen3::json::parse(bad, "config.json");
      ADD_FAILURE() << "accepted " << bad;
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("config.json: not valid JSON at byte"),
                std::string::npos)
          << e.what();
    }
  }
  EXPECT_THROW((void)qwen3::json::parse(std::string(100, '[') + std::string(100, ']'), "deep"),
               UsageError);
  EXPECT_NO_THROW((void)qwen3::json::parse(std::string(60, '[') + std::string(60, ']'), "ok"));
}

TEST(Safetensors, ReadsEachDtypeAndLoadsTesseraTensors) {
  const std::string path = temp_dir("dtypes") + "/t.safetensors";
  const std::vector<float> f32{1.5f, -2.0f, 3.25f, 0.0f, 7.0f, -0.125f};
  std::vector<uint16_t> f16;
  for (float f : f32) f16.push_back(half(f).bits);
  write_safetensors(path, {{"f32", {"F32", {2, 3}, bytes_of(f32)}},
                           {"bf16", bf16(f32, {3, 2})},
                           {"f16", {"F16", {6}, bytes_of(f16)}},
                           {"i32", {"I32", {3}, bytes_of(std::vector<int32_t>{4, -5, 6})}},
                           {"i64", {"I64", {2}, bytes_of(std::vector<int64_t>{7, 8})}}});
  const qwen3::Safetensors file(path);
  EXPECT_EQ(file.entries().size(), 5u);
  EXPECT_EQ(file.floats("f32"), f32);
  EXPECT_EQ(file.floats("bf16", {3, 2}), f32);  // every value is exact in bf16 and f16
  EXPECT_EQ(file.floats("f16"), f32);
  EXPECT_EQ(file.ints("i32"), (std::vector<int32_t>{4, -5, 6}));
  EXPECT_EQ(file.ints("i64"), (std::vector<int32_t>{7, 8}));
  const Tensor<float, 2> t = file.load<float, 2>("bf16");
  EXPECT_EQ(t.shape(), (Shape{3, 2}));
  EXPECT_EQ(t.to_vector(), f32);
  const Tensor<bfloat16, 1> b = file.load<bfloat16, 1>("f16");
  EXPECT_EQ(static_cast<float>(b.to_vector()[2]), 3.25f);
  EXPECT_THROW((void)(file.load<float, 1>("f32")), UsageError);                    // rank 2
  EXPECT_THROW((void)file.floats("f32", std::vector<int64_t>{3, 2}), UsageError);  // shape
  EXPECT_THROW((void)file.floats("i32"), UsageError);                              // not a float
  EXPECT_THROW((void)file.entry("absent"), UsageError);
}

TEST(Safetensors, RefusesHeadersAndRangesThatDoNotFitTheFile) {
  const std::string dir = temp_dir("bad");
  auto refused = [&](const std::string& header, const std::string& says) {
    write_safetensors(dir + "/b.safetensors", {{"x", {"F32", {2}, std::string(8, '\0')}}}, header);
    try {
      qwen3::Safetensors f(dir + "/b.safetensors");
      ADD_FAILURE() << "accepted " << header;
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
    }
  };
  refused(R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[0,16]}})", "outside the data");
  refused(R"({"x":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", "8 bytes for 3 elements");
  refused(R"({"x":{"dtype":"Q7","shape":[2],"data_offsets":[0,8]}})", "unknown dtype");
  refused(R"({"x":{"dtype":"F32","shape":[2]}})", "lacks dtype, shape or data_offsets");
  refused(R"({"x":)", "not valid JSON");
  {
    std::ofstream out(dir + "/short.safetensors", std::ios::binary);
    const uint64_t n = 1000;
    out.write(reinterpret_cast<const char*>(&n), 8);
    out << "{}";
  }
  EXPECT_THROW(qwen3::Safetensors(dir + "/short.safetensors"), UsageError);
  EXPECT_THROW(qwen3::Safetensors(dir + "/none.safetensors"), UsageError);
}

// A Hugging Face directory of the tiny configuration: config.json and the weights under
// Qwen3ForCausalLM's names, linear weights [out, in].
std::string write_directory(const std::string& name, const qwen3::Config& c,
                            const qwen3::HostWeights& w, const std::string& config_extra = "") {
  const std::string dir = temp_dir(name);
  std::ofstream(dir + "/config.json")
      << R"({"architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3", "vocab_size": )"
      << c.vocab << R"(, "hidden_size": )" << c.hidden << R"(, "intermediate_size": )"
      << c.intermediate << R"(, "num_hidden_layers": )" << c.layers
      << R"(, "num_attention_heads": )" << c.heads << R"(, "num_key_value_heads": )" << c.kv_heads
      << R"(, "head_dim": )" << c.head_dim << R"(, "max_position_embeddings": 40960, )"
      << R"("rms_norm_eps": 1e-06, "rope_theta": 1000000, "rope_scaling": null, )"
      << R"("tie_word_embeddings": true, "attention_bias": false, "hidden_act": "silu")"
      << config_extra << "}";
  auto out_in = [](const std::vector<float>& v, int64_t in, int64_t out) {
    std::vector<float> t(v.size());
    for (int64_t i = 0; i < in; ++i)
      for (int64_t o = 0; o < out; ++o) t[o * in + i] = v[i * out + o];
    return bf16(t, {out, in});
  };
  const int64_t q = c.heads * c.head_dim, kv = c.kv_heads * c.head_dim;
  std::map<std::string, RawTensor> t;
  t["model.embed_tokens.weight"] = bf16(w.embed, {c.vocab, c.hidden});
  t["model.norm.weight"] = bf16(w.final_norm, {c.hidden});
  for (int64_t l = 0; l < c.layers; ++l) {
    const qwen3::HostLayer& L = w.layers[l];
    const std::string p = "model.layers." + std::to_string(l) + ".";
    t[p + "input_layernorm.weight"] = bf16(L.input_norm, {c.hidden});
    t[p + "post_attention_layernorm.weight"] = bf16(L.post_norm, {c.hidden});
    t[p + "self_attn.q_norm.weight"] = bf16(L.q_norm, {c.head_dim});
    t[p + "self_attn.k_norm.weight"] = bf16(L.k_norm, {c.head_dim});
    t[p + "self_attn.q_proj.weight"] = out_in(L.q, c.hidden, q);
    t[p + "self_attn.k_proj.weight"] = out_in(L.k, c.hidden, kv);
    t[p + "self_attn.v_proj.weight"] = out_in(L.v, c.hidden, kv);
    t[p + "self_attn.o_proj.weight"] = out_in(L.o, q, c.hidden);
    t[p + "mlp.gate_proj.weight"] = out_in(L.gate, c.hidden, c.intermediate);
    t[p + "mlp.up_proj.weight"] = out_in(L.up, c.hidden, c.intermediate);
    t[p + "mlp.down_proj.weight"] = out_in(L.down, c.intermediate, c.hidden);
  }
  write_safetensors(dir + "/model.safetensors", t);
  return dir;
}

TEST(Checkpoint, ReadsAHuggingFaceDirectoryIntoTheEngine) {
  const qwen3::Config c = qwen3::Config::tiny();
  const qwen3::HostWeights w = qwen3::HostWeights::random<bfloat16>(c, 7);
  const std::string dir = write_directory("good", c, w);
  const qwen3::Config r = qwen3::read_config(dir, c.max_positions);
  EXPECT_EQ(r.vocab, c.vocab);
  EXPECT_EQ(r.hidden, c.hidden);
  EXPECT_EQ(r.intermediate, c.intermediate);
  EXPECT_EQ(r.layers, c.layers);
  EXPECT_EQ(r.heads, c.heads);
  EXPECT_EQ(r.kv_heads, c.kv_heads);
  EXPECT_EQ(r.head_dim, c.head_dim);
  EXPECT_EQ(r.max_positions, c.max_positions);  // min(40960, asked)
  EXPECT_EQ(r.rope_theta, 1e6);
  EXPECT_EQ(r.eps, 1e-6f);
  const qwen3::HostWeights got = qwen3::read_weights(dir, r);
  EXPECT_EQ(got.embed, w.embed);
  EXPECT_EQ(got.final_norm, w.final_norm);
  ASSERT_EQ(got.layers.size(), w.layers.size());
  for (size_t l = 0; l < w.layers.size(); ++l) {
    const qwen3::HostLayer &a = got.layers[l], &b = w.layers[l];
    EXPECT_EQ(a.q, b.q);
    EXPECT_EQ(a.k, b.k);
    EXPECT_EQ(a.v, b.v);
    EXPECT_EQ(a.o, b.o);
    EXPECT_EQ(a.gate, b.gate);
    EXPECT_EQ(a.up, b.up);
    EXPECT_EQ(a.down, b.down);
    EXPECT_EQ(a.input_norm, b.input_norm);
    EXPECT_EQ(a.post_norm, b.post_norm);
    EXPECT_EQ(a.q_norm, b.q_norm);
    EXPECT_EQ(a.k_norm, b.k_norm);
  }
  // The engine on the read weights gives the logits it gives on the originals.
  const std::vector<int32_t> tokens{5, 17, 250};
  qwen3::Model<float> from_file(r, got), from_memory(c, w);
  EXPECT_EQ(from_file.prefill(tokens).to_vector(), from_memory.prefill(tokens).to_vector());
}

TEST(Checkpoint, RefusesModelsTheEngineDoesNotRunNamingTheField) {
  const qwen3::Config c = qwen3::Config::tiny();
  const qwen3::HostWeights w = qwen3::HostWeights::random<bfloat16>(c, 7);
  auto refused = [&](const std::string& extra, const std::string& says) {
    const std::string dir = write_directory("refused", c, w, extra);
    try {
      (void)qwen3::read_config(dir, 64);
      ADD_FAILURE() << "accepted " << extra;
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
    }
  };
  // A later duplicate key wins in this reader, as in Python's json.
  refused(R"(, "tie_word_embeddings": false)", "\"tie_word_embeddings\" is false");
  refused(R"(, "rope_scaling": {"type": "yarn"})", "\"rope_scaling\" is set");
  refused(R"(, "attention_bias": true)", "\"attention_bias\" is true");
  refused(R"(, "model_type": "llama")", "this engine runs qwen3");
  EXPECT_THROW((void)qwen3::read_config(temp_dir("empty"), 64), UsageError);  // no config.json
  // Weights of another shape than config.json says.
  qwen3::Config wider = c;
  wider.hidden = c.hidden * 2;
  EXPECT_THROW((void)qwen3::read_weights(write_directory("shape", c, w), wider), UsageError);
}

}  // namespace
