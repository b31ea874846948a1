// Loads and stores. A tile access walks the tile in the distributed layout's order (thread t,
// vector k: elements (k*T + t)*V + [0, V)), so consecutive threads touch consecutive vectors.
// Each vector is cut into chunks of `chunk` elements that are accessed at once (4, 8 or 16
// bytes) when the whole chunk lies inside the tensor; a chunk that straddles the tensor's edge
// falls back to element accesses, masked: stores drop what lies outside, loads read the pad
// value there (or, unpadded, report a bounds error and read the pad value). Addresses are
// origin + index along each axis, times the tensor's strides, in 64-bit arithmetic.
#include "codegen_emitter.hpp"

namespace tessera::backend::cuda::detail {

struct Emitter::TileWalk {
  enum class Mode { LoadRegs, LoadSink, Store };
  Mode mode = Mode::LoadRegs;
  const ir::Op* op = nullptr;
  int param = 0;
  DType dtype = DType::F32;
  Shape tile;
  std::vector<std::string> origin;  // per axis: the tile's first element (long long)
  int chunk = 1;
  bool padded = true;
  std::string pad;                    // loads: the value read outside the tensor
  std::string regs;                   // LoadRegs: the destination array; Store: the source value
  Layout regs_layout;                 // Store: the source's layout (uniform or distributed)
  const ElementSink* sink = nullptr;  // LoadSink
  bool storage_values = false;        // LoadSink: hand over storage values (else register values)
};

void Emitter::walk_tile(const TileWalk& w) {
  const size_t rank = w.tile.size();
  const std::string ref = param_var(w.param), s = storage_type(w.dtype);
  const std::string cq = w.mode != TileWalk::Mode::Store ? "const " : "";
  line("{");
  ++depth_;
  line(cq, s, "* base = (", cq, s, "*)", ref, ".data;");
  for (size_t d = 0; d < rank; ++d) line("const long long o", d, " = ", w.origin[d], ";");
  if (!spec(w.param).inner_unit_stride) {
    walk_chunks(w, false);
  } else {
    // Most tiles lie wholly inside the tensor: for them, one 64-bit address for the tile and
    // 32-bit offsets within it, no bounds checks. Tiles at the edges take the general path.
    std::string whole, span;
    for (size_t d = 0; d < rank; ++d) {
      const std::string o = "o" + str(static_cast<int64_t>(d)), e = str(w.tile[d]),
                        ext = ref + ".shape[" + str(static_cast<int64_t>(d)) + "]";
      whole += o + " >= 0 && " + o + " + " + e + " <= " + ext + " && ";
      if (d + 1 < rank && w.tile[d] > 1)
        span +=
            str(w.tile[d] - 1) + " * " + ref + ".strides[" + str(static_cast<int64_t>(d)) + "] + ";
    }
    // The tile's last element is at most 2^31 - 1 elements past its first: offsets fit 32 bits.
    open("if (", whole, span, w.tile.back(), " <= 0x7fffffffLL)");
    std::string first;
    for (size_t d = 0; d + 1 < rank; ++d)
      first += "o" + str(static_cast<int64_t>(d)) + " * " + ref + ".strides[" +
               str(static_cast<int64_t>(d)) + "] + ";
    line(cq, s, "* tb = base + (", first, "o", rank - 1, ");");
    for (size_t d = 0; d + 1 < rank; ++d)
      if (w.tile[d] > 1) line("const unsigned s", d, " = (unsigned)", ref, ".strides[", d, "];");
    walk_chunks(w, true);
    if (w.mode == TileWalk::Mode::LoadRegs && prefetches_next_tile(*w.op)) prefetch_next_tile(w);
    close("} else {");
    ++depth_;
    walk_chunks(w, false);
    close();
  }
  close();
}

// A persistent row-wise kernel (LayoutPlan::prefetch_next_tile) walks its tiles one after another
// in each block: load, reduce, store. A load of the block's own row tile (its origin the tile
// coordinates) also asks L2 for the same tile of the block's next row, which then arrives from
// DRAM while this row is reduced and stored, at no register cost; the next iteration's load finds
// it in L2. Only where the grid's tiles run along axis 0 alone (checked at run time).
bool Emitter::prefetches_next_tile(const ir::Op& op) const {
  const Shape& tile = op.attrs.shape;
  if (plan_.prefetch_next_tile <= 0 || !vector_only_.empty() || op.attrs.at_element ||
      tile.empty() || numel(tile) != tile.back() || numel(tile) % (threads() * vec()) != 0)
    return false;
  const ir::Op* first = def(op.operands[0]);
  if (!first || first->kind != ir::OpKind::TileIndex || first->attrs.axis != 0) return false;
  return std::all_of(op.operands.begin(), op.operands.end(), [&](ir::ValueId u) {
    const ir::Op* d = def(u);
    return d && (d->kind == ir::OpKind::TileIndex || d->kind == ir::OpKind::Constant);
  });
}

void Emitter::prefetch_next_tile(const TileWalk& w) {
  const std::string ref = param_var(w.param), s = storage_type(w.dtype), t0 = str(w.tile[0]);
  line("// The block's next tile, into L2 (Emitter::prefetch_next_tile).");
  const std::string step = str(plan_.prefetch_next_tile) + "LL * gridDim.x";
  open("if (grid.total == grid.tiles[0] && blk + ", step, " < grid.total && o0 + (", step,
       " + 1) * ", t0, " <= ", ref, ".shape[0])");
  line("const ", s, "* nb = tb + ", step, " * ", t0, " * ", ref, ".strides[0];");
  unroll();
  open("for (int k = 0; k < ", plan_.vectors(numel(w.tile)), "; ++k)");
  line("tsr_prefetch_l2(nb + (k * ", threads(), " + tid) * ", vec(), ");");
  close();
  close();
}

// The tile's vectors (and, in each, chunks of w.chunk elements), each thread its own. `whole`:
// the tile lies inside the tensor (walk_tile checked), addressed from `tb` by 32-bit offsets.
void Emitter::walk_chunks(const TileWalk& w, bool whole) {
  using Mode = TileWalk::Mode;
  const int64_t t = threads(), v = vec(), c = w.chunk, n = numel(w.tile);
  const size_t rank = w.tile.size(), last = rank - 1;
  const std::string ref = param_var(w.param), s = storage_type(w.dtype);
  const bool load = w.mode != Mode::Store;
  unroll();
  if (vector_only_.empty())
    open("for (int k = 0; k < ", plan_.vectors(n), "; ++k)");
  else  // the epilogue's vector only (Emitter::epilogue_start)
    open("for (int k = ", vector_only_, "; k < ", vector_only_, " + ", vector_group_, "; ++k)");
  const bool chunks = v / c > 1;
  if (chunks) {
    unroll();
    open("for (int c = 0; c < ", v / c, "; ++c)");
  }
  line("const ", whole ? "unsigned" : "int", " f = (k * ", t, " + tid) * ", v,
       chunks ? " + c * " + str(c) : "", ";");
  const std::string reg0 = v == 1 ? "k" : "k * " + str(v) + (chunks ? " + c * " + str(c) : "");
  const bool ragged = n % (t * v) != 0;
  if (ragged) open("if (f < ", n, ")");

  // Indices in the tile, and in the tensor.
  std::vector<std::string> idx;
  {
    // f < numel(tile) (a ragged last vector is guarded), so an axis after only extent-1 axes
    // needs no remainder.
    const Shape strides = row_major_strides(w.tile);
    bool leading_ones = true;
    for (size_t d = 0; d < rank; ++d) {
      std::string e = "f";
      if (strides[d] != 1) e = "(f / " + str(strides[d]) + ")";
      if (!leading_ones) e = "(" + e + " % " + str(w.tile[d]) + ")";
      leading_ones &= w.tile[d] == 1;
      if (whole && w.tile[d] == 1) e = "0u";
      idx.push_back(e);
      if (!whole) line("const long long g", d, " = o", d, " + ", e, ";");
    }
  }
  std::string outer, off;
  if (whole) {
    for (size_t d = 0; d < last; ++d)
      if (w.tile[d] > 1) off += idx[d] + " * s" + str(static_cast<int64_t>(d)) + " + ";
    line("const unsigned off = ", off, idx[last], ";");
  } else {
    for (size_t d = 0; d < rank; ++d) {
      const std::string g = "g" + str(static_cast<int64_t>(d)),
                        ext = ref + ".shape[" + str(static_cast<int64_t>(d)) + "]";
      if (d < last) outer += g + " >= 0 && " + g + " < " + ext + " && ";
      const bool unit = d == last && spec(w.param).inner_unit_stride;
      off += (d ? " + " : "") +
             (unit ? g : g + " * " + ref + ".strides[" + str(static_cast<int64_t>(d)) + "]");
    }
    line("const long long off = ", off, ";");
  }
  const std::string ptr = whole ? "tb" : "base";
  const std::string glast = "g" + str(static_cast<int64_t>(last));
  const std::string ext_last = ref + ".shape[" + str(static_cast<int64_t>(last)) + "]";

  // One element: register `reg`, tile indices `ix`, inside the tensor when `in`, at ptr[addr].
  const auto element = [&](const std::string& reg, const std::vector<std::string>& ix,
                           const std::string& addr, const std::string& g_inner) {
    if (load && !w.padded && !whole) {
      std::string args;
      for (size_t d = 0; d < rank; ++d)
        args += ", " + (d == last ? g_inner : "g" + str(static_cast<int64_t>(d))) + ", " + ref +
                ".shape[" + str(static_cast<int64_t>(d)) + "]";
      line("if (!in) tsr_bounds(", report_site(*w.op), ", blk", args, ");");
    }
    const std::string at_addr = ptr + "[" + addr + "]";
    if (w.mode == Mode::LoadRegs) {
      if (whole)
        line(w.regs, "[", reg, "] = ", from_storage(w.dtype, at_addr), ";");
      else
        line(w.regs, "[", reg, "] = in ? ", from_storage(w.dtype, at_addr), " : ", w.pad, ";");
    } else if (w.mode == Mode::LoadSink) {
      const std::string read = w.storage_values ? at_addr : from_storage(w.dtype, at_addr);
      (*w.sink)(ix, whole ? read : "(in ? " + read + " : " + w.pad + ")");
    } else {
      line(whole ? "" : "if (in) ", at_addr, " = ",
           to_storage(w.dtype, at(w.regs, w.regs_layout, reg)), ";");
    }
  };

  if (c > 1) {
    const int64_t words = c * static_cast<int64_t>(dtype_size(w.dtype)) / 4;
    std::vector<std::string> ix = idx;
    ix[last] = "(" + idx[last] + " + e)";
    if (!whole) open("if (", outer, glast, " >= 0 && ", glast, " + ", c, " <= ", ext_last, ")");
    line("unsigned w[", words, "]", w.mode == Mode::Store ? " = {}" : "", ";");
    if (load) line("tsr_ld_words(", ptr, " + off, w);");
    if (w.mode == Mode::LoadRegs) {
      regs_from_words(w.dtype, w.regs, reg0, c);
    } else if (w.mode == Mode::Store) {
      regs_into_words(w.dtype, w.regs, w.regs_layout, reg0, c);
    } else {
      unroll();
      open("for (int e = 0; e < ", c, "; ++e)");
      const std::string word = "tsr_word<" + s + ">::get(w, e)";
      (*w.sink)(ix, w.storage_values ? word : from_storage(w.dtype, word));
      close();
    }
    if (!load) line("tsr_st_words(", ptr, " + off, w);");
    if (!whole) {
      close("} else {");
      ++depth_;
      if (spec(w.param).inner_extent_aligned) {
        // The extent is a multiple of the chunk and the chunk starts at a multiple of it: a chunk
        // that is not wholly inside is wholly outside. No element access, one report.
        if (load && !w.padded) {
          std::string args;
          for (size_t d = 0; d < rank; ++d)
            args += ", g" + str(static_cast<int64_t>(d)) + ", " + ref + ".shape[" +
                    str(static_cast<int64_t>(d)) + "]";
          line("tsr_bounds(", report_site(*w.op), ", blk", args, ");");
        }
        if (w.mode == Mode::LoadRegs) {
          unroll();
          line("for (int e = 0; e < ", c, "; ++e) ", w.regs, "[", reg0, " + e] = ", w.pad, ";");
        } else if (w.mode == Mode::LoadSink) {
          unroll();
          open("for (int e = 0; e < ", c, "; ++e)");
          (*w.sink)(ix, w.pad);
          close();
        }
      } else {
        unroll();
        open("for (int e = 0; e < ", c, "; ++e)");
        line("const long long ge = ", glast, " + e;");
        line("const bool in = ", outer, "ge >= 0 && ge < ", ext_last, ";");
        element(reg0 + " + e", ix, "off + e", "ge");
        close();
      }
      close();
    }
  } else {
    if (!whole) line("const bool in = ", outer, glast, " >= 0 && ", glast, " < ", ext_last, ";");
    element(reg0, idx, "off", glast);
  }
  if (ragged && w.mode == Mode::LoadRegs) {
    // Registers past the tile's end hold the pad value, so later ops never read garbage.
    close("} else {");
    ++depth_;
    if (c > 1) {
      unroll();
      line("for (int e = 0; e < ", c, "; ++e) ", w.regs, "[", reg0, " + e] = ", w.pad, ";");
    } else {
      line(w.regs, "[", reg0, "] = ", w.pad, ";");
    }
  }
  if (ragged) close();
  if (chunks) close();
  close();
}

void Emitter::regs_from_words(DType dt, const std::string& regs, const std::string& reg0,
                              int64_t count) {
  unroll();
  if (dt == DType::F16 || dt == DType::BF16) {  // two 16-bit floats a word, converted together
    open("for (int e = 0; e < ", count, "; e += 2)");
    line("tsr_", dt == DType::F16 ? "f16x2" : "bf16x2", "_to_f32(w[e / 2], ", regs, "[", reg0,
         " + e], ", regs, "[", reg0, " + e + 1]);");
  } else {
    open("for (int e = 0; e < ", count, "; ++e)");
    line(regs, "[", reg0,
         " + e] = ", from_storage(dt, "tsr_word<" + storage_type(dt) + ">::get(w, e)"), ";");
  }
  close();
}

void Emitter::regs_into_words(DType dt, const std::string& regs, const Layout& layout,
                              const std::string& reg0, int64_t count) {
  unroll();
  if (dt == DType::F16 || dt == DType::BF16) {
    open("for (int e = 0; e < ", count, "; e += 2)");
    line("w[e / 2] = tsr_f32_to_", dt == DType::F16 ? "f16x2" : "bf16x2", "(",
         at(regs, layout, reg0 + " + e"), ", ", at(regs, layout, reg0 + " + e + 1"), ");");
  } else {
    open("for (int e = 0; e < ", count, "; ++e)");
    line("tsr_word<", storage_type(dt), ">::put(w, e, ",
         to_storage(dt, at(regs, layout, reg0 + " + e")), ");");
  }
  close();
}

// A streamed load's vectors (those vector_only_ names) and the stash (Emitter::plan_stash): each
// thread writes its own vectors and reads back only those, so no barrier orders the two.
void Emitter::stash_vectors(const ir::Op& load, const std::string& regs, int64_t offset,
                            bool write) {
  const DType dt = f_.params.at(load.attrs.param).dtype;
  const int64_t v = vec(), words = v * static_cast<int64_t>(dtype_size(dt)) / 4;
  line(write ? "// Kept in shared memory for the row's later passes (Emitter::plan_stash)."
             : "// Read back from shared memory, where the row's first pass kept it.");
  unroll();
  open("for (int k = ", vector_only_, "; k < ", vector_only_, " + ", vector_group_, "; ++k)");
  line("unsigned* at = ", smem("unsigned", offset), " + (k * ", threads(), " + tid) * ", words,
       ";");
  line("unsigned w[", words, "];");
  const std::string reg0 = "k * " + str(v);
  if (write) {
    regs_into_words(dt, regs, layout(load.results[0]), reg0, v);
    unroll();
    line("for (int i = 0; i < ", words, "; ++i) at[i] = w[i];");
  } else {
    unroll();
    line("for (int i = 0; i < ", words, "; ++i) w[i] = at[i];");
    regs_from_words(dt, regs, reg0, v);
  }
  close();
}

void Emitter::load(const ir::Op& op) {
  const ir::Attrs& a = op.attrs;
  const ir::ValueId r = op.results[0];
  if (layout(r).kind == LayoutKind::Shared) {
    line("// (landed in shared memory by the op that uses it)");
    return;
  }
  const DType dt = f_.params.at(a.param).dtype;
  if (a.shape.empty()) {  // a rank-0 tensor: its one element
    declare(
        r,
        from_storage(dt, "((const " + storage_type(dt) + "*)" + param_var(a.param) + ".data)[0]"),
        true);
    return;
  }
  declare(r);
  const auto stash = vector_only_.empty() ? stash_.end() : stash_.find(&op);
  if (stash != stash_.end() && stash->second.written)
    return stash_vectors(op, name(r), stash->second.offset, false);
  TileWalk w;
  load_walk(op, w);
  w.mode = TileWalk::Mode::LoadRegs;
  w.regs = name(r);
  walk_tile(w);
  if (stash != stash_.end()) {
    stash_vectors(op, name(r), stash->second.offset, true);
    stash->second.written = true;
  }
}

void Emitter::load_walk(const ir::Op& op, TileWalk& w) {
  const ir::Attrs& a = op.attrs;
  const DType dt = f_.params.at(a.param).dtype;
  w.op = &op;
  w.param = a.param;
  w.dtype = dt;
  w.tile = a.shape;
  for (size_t d = 0; d < a.shape.size(); ++d)
    w.origin.push_back("(long long)" + name(op.operands[d]) +
                       (a.at_element ? "" : " * " + str(a.shape[d])));
  // A tile at any element (load_at) may start anywhere within a vector: element accesses.
  w.chunk = a.at_element ? 1 : vector_chunk(dt, spec(a.param), a.shape, vec());
  w.padded = a.padded;
  w.pad = cast_literal(dt, a.padded ? a.value : 0.0);
}

void Emitter::load_into(const ir::Op& op, const ElementSink& sink, bool storage_values) {
  TileWalk w;
  load_walk(op, w);
  w.mode = TileWalk::Mode::LoadSink;
  if (storage_values) w.pad = to_storage(f_.params.at(op.attrs.param).dtype, w.pad);
  w.sink = &sink;
  w.storage_values = storage_values;
  walk_tile(w);
}

namespace {
// Whether a store to parameter `param` may follow another store to the same tile in one block:
// the parameter is stored more than once, or from inside a loop. Two stores can use different
// thread mappings (an mma accumulator's fragments, a distributed tile), so the later one must
// wait for the earlier one, or they race; the CPU reference's order (last store wins) needs it.
bool store_may_repeat(const ir::Function& f, int param) {
  int stores = 0;
  bool in_loop = false;
  const auto visit = [&](const ir::Block& b, bool looped, const auto& self) -> void {
    for (const ir::Op& op : b.ops) {
      if (op.kind == ir::OpKind::Store && op.attrs.param == param) {
        ++stores;
        in_loop |= looped;
      }
      for (const ir::Block& r : op.regions) self(r, looped || op.kind == ir::OpKind::For, self);
    }
  };
  visit(f.body, false, visit);
  return stores > 1 || in_loop;
}
}  // namespace

void Emitter::store(const ir::Op& op) {
  const Operand x = operand(op, 0);
  const int p = op.attrs.param;
  const bool repeats = store_may_repeat(f_, p);
  if (repeats) barrier("an earlier store to this tile may have used another thread mapping");
  const ir::Param& param = f_.params.at(p);
  const Shape& tile = param.tile_shape;
  const std::string ref = param_var(p), s = storage_type(param.dtype);
  if (tile.empty()) {  // a rank-0 output: one element, written once
    line("if (tid == 0) *(", s, "*)", ref, ".data = ", to_storage(param.dtype, x.var), ";");
    return;
  }
  std::vector<std::string> origin;
  for (size_t d = 0; d < tile.size(); ++d)
    origin.push_back("(long long)" + tile_coord(static_cast<int>(d)) + " * " + str(tile[d]));
  const int64_t esize = static_cast<int64_t>(dtype_size(param.dtype));
  if (!repeats && x.layout.kind == LayoutKind::MmaAcc && tma_store(op, x)) return;
  if (x.layout.kind == LayoutKind::MmaAcc && tile.size() == 2 && tile[1] % 2 == 0 &&
      (esize == 2 || esize == 4) && spec(p).inner_unit_stride &&
      spec(p).vector_bytes >= 2 * esize) {
    // Straight from the accumulator fragments, two neighbours at a time: registers 2q and 2q+1
    // hold columns c and c+1 of one row (c even, so the pair is 2 * size aligned).
    const MmaTiling m = plan_.tiling(tile);
    const int64_t words = 2 * esize / 4;
    // f16/bf16 pairs are rounded and packed by one instruction.
    const DType dt = param.dtype;
    const auto pair_word = [&](const std::string& lo, const std::string& hi) {
      if (dt == DType::F16 || dt == DType::BF16)
        return std::string(dt == DType::F16 ? "tsr_pack_f16x2(" : "tsr_pack_bf16x2(") + lo + ", " +
               hi + ")";
      return std::string();
    };
    const auto put_pair = [&](const std::string& at) {
      if (const std::string w = pair_word(x.var + "[i]", x.var + "[i + 1]"); !w.empty()) {
        line("tsr_st_word(", at, ", ", w, ");");
        return;
      }
      line("unsigned w[", words, "] = {};");
      line("tsr_word<", s, ">::put(w, 0, ", to_storage(dt, x.var + "[i]"), ");");
      line("tsr_word<", s, ">::put(w, 1, ", to_storage(dt, x.var + "[i + 1]"), ");");
      line("tsr_st_words(", at, ", w);");
    };
    const auto fragment_coords = [&] {
      line("const int row = (wm * ", m.frags_m, " + i / ", m.frags_n * 4, ") * 16 + (", lane(),
           " >> 2) + ((i >> 1) & 1) * 8;");
      line("const int col = (wn * ", m.frags_n, " + (i >> 2) % ", m.frags_n, ") * 8 + (", lane(),
           " & 3) * 2;");
    };
    line("{");
    ++depth_;
    line(s, "* base = (", s, "*)", ref, ".data;");
    line("const long long o0 = ", origin[0], ", o1 = ", origin[1], ";");
    line("const int wm = ", warp(), " / ", m.warps_n, ", wn = ", warp(), " % ", m.warps_n, ";");
    // A tile wholly inside the tensor (every tile but the ragged edge ones) stores without a
    // check per element: the epilogue of a pipelined GEMM is otherwise most of its instructions.
    open("if (o0 + ", m.m, " <= ", ref, ".shape[0] && o1 + ", m.n, " <= ", ref, ".shape[1])");
    line(s, "* const corner = base + o0 * ", ref, ".strides[0] + o1;");
    line("const long long ld = ", ref, ".strides[0];");
    unroll();
    open("for (int i = 0; i < ", m.registers(), "; i += 2)");
    fragment_coords();
    // Fragments past the tile exist only when the tiling over-covers it.
    if (m.rows() != m.m || m.cols() != m.n)
      line("if (row >= ", m.m, " || col >= ", m.n, ") continue;");
    put_pair("corner + row * ld + col");
    close();
    close("} else {");
    ++depth_;
    unroll();
    open("for (int i = 0; i < ", m.registers(), "; i += 2)");
    fragment_coords();
    line("const long long g0 = o0 + row, g1 = o1 + col;");
    line("if (row >= ", m.m, " || g0 >= ", ref, ".shape[0]) continue;");
    line(s, "* at = base + g0 * ", ref, ".strides[0] + g1;");
    open("if (col + 1 < ", m.n, " && g1 + 1 < ", ref, ".shape[1])");
    put_pair("at");
    close("} else {");
    ++depth_;
    line("if (col < ", m.n, " && g1 < ", ref, ".shape[1]) at[0] = ", to_storage(dt, x.var + "[i]"),
         ";");
    close();
    close();
    close();
    close();
    return;
  }
  if (x.layout.kind == LayoutKind::MmaAcc) {
    // Straight from the accumulator fragments: each thread stores the elements it holds.
    line("{");
    ++depth_;
    line(s, "* base = (", s, "*)", ref, ".data;");
    for (size_t d = 0; d < tile.size(); ++d) line("const long long o", d, " = ", origin[d], ";");
    for_registers(x.layout, tile, [&](const Reg& g) {
      const Shape strides = row_major_strides(tile);
      std::string in = g.valid, off;
      for (size_t d = 0; d < tile.size(); ++d) {
        std::string i = "(" + g.flat + ")";
        if (strides[d] != 1) i += " / " + str(strides[d]);
        if (d != 0) i = "(" + i + ") % " + str(tile[d]);
        const std::string gd = "g" + str(static_cast<int64_t>(d));
        line("const long long ", gd, " = o", d, " + ", i, ";");
        in += (in.empty() ? "" : " && ") + gd + " < " + ref + ".shape[" +
              str(static_cast<int64_t>(d)) + "]";
        off +=
            (d ? " + " : "") + gd + " * " + ref + ".strides[" + str(static_cast<int64_t>(d)) + "]";
      }
      line("if (", in, ") base[", off, "] = ", to_storage(param.dtype, x.var + "[" + g.reg + "]"),
           ";");
    });
    close();
    return;
  }
  TileWalk w;
  w.mode = TileWalk::Mode::Store;
  w.op = &op;
  w.param = p;
  w.dtype = param.dtype;
  w.tile = tile;
  w.origin = origin;
  w.chunk = vector_chunk(param.dtype, spec(p), tile, vec());
  w.regs = x.var;
  w.regs_layout = x.layout;
  walk_tile(w);
}

}  // namespace tessera::backend::cuda::detail
