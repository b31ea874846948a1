// A Hugging Face model directory (config.json + model.safetensors, Qwen3ForCausalLM's names and
// layouts) read into the engine's Config and HostWeights. scripts/qwen3_weights.py writes such a
// directory with random weights (no trained checkpoint can be had here); a real Qwen3 checkpoint
// of one safetensors file reads the same way.
#pragma once

#include <string>

#include "model.hpp"

namespace qwen3 {

// The architecture from `dir`/config.json. Throws UsageError for a model this engine does not run
// (not qwen3, untied embeddings, biases, rope scaling, sliding windows) naming the field.
// max_positions is min(max_position_embeddings, max_positions): the engine's KV cache holds that
// many positions, so ask only for the context a run needs.
Config read_config(const std::string& dir, int64_t max_positions);

// The weights from `dir`/model.safetensors, linear weights transposed to [in, out]. Throws
// UsageError naming the tensor that is missing or of the wrong shape.
HostWeights read_weights(const std::string& dir, const Config& config);

}  // namespace qwen3
