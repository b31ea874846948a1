// The CUDA emitter's internals, shared by the codegen*.cpp files (each lowers one class of ops).
// The emitter follows the LayoutPlan: every value has a layout and a C++ variable; an op reads
// its operands through operand(), which materialises the lowered form's convert_layout ops (at the
// reader's first use; lowered.hpp), and writes its
// result in the layout the plan gave it.
#pragma once

#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/backend/cuda/attention_pipeline.hpp"
#include "tessera/backend/cuda/codegen.hpp"
#include "tessera/backend/cuda/layout.hpp"
#include "tessera/backend/cuda/lowered.hpp"
#include "tessera/backend/cuda/smem_alloc.hpp"

namespace tessera::backend::cuda::detail {

// ---- C spellings of element types and values (codegen_types.cpp) -----------------------------
// Registers hold f16/bf16 as float and bool as bool; memory holds them as their bit patterns.
std::string reg_type(DType t);
std::string storage_type(DType t);
// Reductions accumulate f16/bf16 in f32 and narrow integers in int.
std::string acc_type(DType t);
// Bytes of one value of an acc_type() spelling (a reduction's shared-memory partials).
int64_t acc_bytes(const std::string& ctype);
// `v` rounded to t as the CPU backend rounds a constant, spelled as a literal of reg_type(t).
std::string literal(DType t, double v);
// An integer constant of dtype t (an integer dtype), exact: `i` wrapped to t's width.
std::string integer_literal(DType t, int64_t i);
// `v` converted to t as a cast converts it (float -> integer saturates): load padding values.
std::string cast_literal(DType t, double v);
std::string from_storage(DType t, const std::string& s);
std::string to_storage(DType t, const std::string& r);
// An f32 result rounded to t (f16/bf16); other types: unchanged (assignment wraps integers).
std::string round_to(DType t, const std::string& expr);
// The cast op: x of type `from` converted to `to` (float -> int truncates and saturates). With
// `round` false, a cast to f16/bf16 stops at the f32 value that a store's conversion rounds.
std::string cast(DType from, DType to, const std::string& x, bool round = true);
std::string str(int64_t v);
// Row-major index expressions of element `flat` of `shape` (codegen_convert.cpp).
std::vector<std::string> indices(const std::string& flat, const Shape& shape);
// A reduction or scan along `axis` of a staged row-major tile of `strides`: the offset of the
// first element of the line that element `flat` of the result shape `rshape` (1 along `axis`)
// reads (codegen_convert.cpp).
std::string line_start(const std::string& flat, const Shape& rshape, const Shape& strides,
                       size_t axis);

// ---- naming and limits (codegen.cpp) -----------------------------------------------------------
std::string identifier(const std::string& s);    // a C identifier made of s
std::string short_path(const char* file);        // "examples/add.cpp"
std::string comment_text(const std::string& s);  // safe inside a // comment
int64_t smem_limit(const Arch& a);               // dynamic shared memory a block may use
std::string param_ctype(DType t);                // how a Scalar parameter is passed

// The attention loop of `a` lowered for sm_90a (codegen_attention.cpp); an empty source when the
// loop's body has an op that lowering does not hold in registers (emit() then takes the general
// lowering).
EmittedKernel emit_attention(const ir::Function& f, const KernelSpec& spec, const LayoutPlan& plan,
                             const AttentionPipeline& a);

class Emitter {
 public:
  Emitter(const ir::Function& f, const KernelSpec& spec, const LayoutPlan& plan);
  EmittedKernel run();
  // f was reordered (issue_loads_first): its op at walk index i is op origin[i] of the IR the
  // host decodes error reports with, so a report names that index.
  void report_sites_as(std::vector<int> origin) { report_origin_ = std::move(origin); }
  // The shared memory a block may give streamed rows kept for their later passes (plan_stash):
  // what the kernel's other buffers leave (emit measures them without the stash first).
  void limit_stash(int64_t bytes) { stash_room_ = bytes; }
  // Whether the emitted body moves values between threads (shared memory, shuffles, barriers).
  bool shares_values() const { return uses_smem_ || uses_lane_ || uses_warp_ || uses_barrier_; }

  // ---- output ----
  template <class... Args>
  void line(Args&&... args) {
    std::ostringstream s;
    (s << ... << args);
    out_ << std::string(2 * static_cast<size_t>(depth_), ' ') << s.str() << "\n";
  }
  template <class... Args>
  void open(Args&&... head) {
    line(std::forward<Args>(head)..., " {");
    ++depth_;
  }
  void close(const std::string& tail = "}");
  void unroll() { line("#pragma unroll"); }
  // For run-time loops in the simple paths: unrolling them costs NVRTC seconds and buys little.
  void no_unroll() { line("#pragma unroll 1"); }
  void barrier(const char* why = nullptr) {
    uses_barrier_ = true;
    line(barrier_stmt_, why ? std::string("  // ") + why : std::string());
  }

  // ---- values ----
  const ir::Function& fn() const { return f_; }
  const LayoutPlan& plan() const { return plan_; }
  // The lowered form, software-pipelined when the kernel has a pipelined loop.
  const LoweredFunction& lowered() const { return pipelined_.pipeline ? pipelined_ : lowered_; }
  int threads() const { return plan_.threads; }
  int vec() const { return plan_.vec; }
  const ir::Type& type(ir::ValueId v) const { return f_.type(v); }
  const Layout& layout(ir::ValueId v) const { return plan_.of[v]; }
  const std::string& name(ir::ValueId v) const { return names_.at(v); }
  // v is held by an existing variable (a reshape, an identity permute, a loop's carried value).
  void alias(ir::ValueId v, const std::string& var) { names_[v] = var; }
  // Declares the variable of v (an array, or a scalar when uniform); `init` for uniform values.
  void declare(ir::ValueId v, const std::string& init = "", bool constant = false);
  void declare(const std::string& var, DType t, const Layout& l, const Shape& shape,
               const std::string& comment = "");
  int registers(const Layout& l, const Shape& shape) const { return plan_.registers(l, shape); }
  // The dtype an elementwise result is rounded to where it is computed: its own, or f32 for an
  // f16/bf16/fp8 value whose only use is a store, which rounds it anyway while converting it to
  // memory (cvt.rn of the f32 value gives the same bits as rounding first), saving the
  // round trip through the 16-bit type.
  DType rounding(ir::ValueId v) const {
    return rounded_by_store_.count(v) ? DType::F32 : type(v).dtype;
  }

  // An operand as the op reads it: its variable after the plan's conversion, and that layout.
  struct Operand {
    std::string var;
    Layout layout;
  };
  Operand operand(const ir::Op& op, size_t i);
  // Element `reg` of a variable in layout l (a uniform variable is every element).
  static std::string at(const std::string& var, const Layout& l, const std::string& reg);
  std::string at(ir::ValueId v, const std::string& reg) const {
    return at(name(v), layout(v), reg);
  }

  // ---- register loops (codegen_convert.cpp) ----
  // Inside the body: `reg` indexes the register array, `flat` is the element's row-major index in
  // the value's shape, `valid` tells whether the register holds an element of the shape at all
  // ("" = always), `owner` whether this register is the one that writes it out ("" = always).
  struct Reg {
    std::string reg, flat, valid, owner;
    // The element's index along each axis where the layout knows them apart (an mma
    // accumulator's row and column), else empty: readers that need one axis (a broadcast row)
    // then skip the division of `flat`, and the compiler sees which registers share an element.
    std::vector<std::string> coords = {};
  };
  void for_registers(const Layout& l, const Shape& shape,
                     const std::function<void(const Reg&)>& body);
  // Writes a register-layout (or uniform) value into the shared-memory array `dst` (of its
  // register type), row-major. The bytes of `dst` may have held a dead buffer of an earlier op
  // (SmemAllocator reuses them), so each use is bracketed: the caller emits a barrier before
  // staging (earlier readers are done) and one after it (every element is written) before
  // reading.
  void stage(const std::string& var, const Layout& l, const Shape& shape, const std::string& dst);
  // The conversion of v (held in `var`, layout `from`) to layout `to`, into a new variable, which
  // it returns: a fill from a uniform value, else through shared memory.
  std::string convert(ir::ValueId v, const std::string& var, const Layout& from, const Layout& to);

  // ---- shared memory ----
  // A pointer of type ctype* into the kernel's dynamic shared memory at byte `offset`.
  std::string smem(const std::string& ctype, int64_t offset);
  // A buffer of `bytes` for `op` (what: what it holds), live while the op is emitted: its byte
  // offset from the kernel's SmemAllocator, beside the op's other buffers and over those of ops
  // already emitted. Fails, at the op's line, past what the architecture gives a block.
  int64_t smem_buffer(int64_t bytes, const ir::Op& op, const std::string& what);

  // ---- per-op facts ----
  int op_index(const ir::Op& op) const { return op_index_.at(&op); }
  // The index of an op whose run-time check writes the error report (tsr_report, tsr_bounds);
  // the kernel then reports errors, and the host reads the report after each launch.
  int report_site(const ir::Op& op) {
    reports_errors_ = true;
    return report_origin_.empty() ? op_index(op)
                                  : report_origin_.at(static_cast<size_t>(op_index(op)));
  }
  const std::string& op_text(const ir::Op& op) const { return op_text_.at(&op); }
  // This block's tile coordinate along `axis` (an int), the lane and the warp of this thread.
  const std::string& tile_coord(int axis) {
    coord_used_.at(static_cast<size_t>(axis)) = true;
    return tile_coords_.at(static_cast<size_t>(axis));
  }
  std::string lane() {
    uses_lane_ = true;
    return "lane";
  }
  std::string warp() {
    uses_warp_ = true;
    return "warp";
  }
  std::string param_var(int p) const { return param_vars_.at(static_cast<size_t>(p)); }
  const TensorSpec& spec(int p) const { return spec_.tensors.at(static_cast<size_t>(p)); }
  const ir::Op* def(ir::ValueId v) const { return def_.at(v); }
  std::string fresh(const std::string& base);

  // ---- ops, one file per class ----
  void block(const ir::Block& b);
  size_t epilogue_start(const ir::Block& b) const;
  // Streamed rows (LayoutPlan::stream_rows): which values are recomputed at each use, one vector
  // at a time, rather than held; and their recomputation inside a vector loop.
  void plan_streaming(const ir::Block& b, size_t tail);
  bool streamed(ir::ValueId v) const { return !streamed_.empty() && streamed_[v]; }
  void materialize(ir::ValueId v);
  void end_materialized();
  // "for (int i = ...)" over v's registers: all of them, or vector_only_'s V of a distributed one.
  std::string register_loop(ir::ValueId v) const;
  void op(const ir::Op& op);
  void interface_op(const ir::Op& op);  // codegen_control.cpp
  void constant(const ir::Op& op);      // codegen_elementwise.cpp
  void iota(const ir::Op& op);
  void unary(const ir::Op& op);
  void binary(const ir::Op& op);
  void select(const ir::Op& op);
  void ternary(const ir::Op& op);
  void cast_op(const ir::Op& op);
  // An elementwise op: result[i] = expr(operand elements i), for every register of the result's
  // layout (once, when it is uniform).
  using Expr = std::function<std::string(const std::vector<std::string>&)>;
  void map(const ir::Op& op, const Expr& expr);
  // One element of a per-element op's result (unary, binary, compare, select, ternary, cast)
  // from its operands' elements x; and `a k b` for a binary op kind on values of dtype t.
  std::string element_expr(const ir::Op& op, const std::vector<std::string>& x) const;
  std::string combine_expr(ir::OpKind k, DType t, const std::string& a, const std::string& b) const;
  void broadcast(const ir::Op& op);  // codegen_convert.cpp
  // Stages operand 0 (x) in shared memory, then reads each element of the distributed result
  // from element src(indices of the result element) of x.
  void gather(const ir::Op& op, const Operand& x,
              const std::function<std::string(const std::vector<std::string>&)>& src);
  void reshape(const ir::Op& op);
  void permute(const ir::Op& op);
  void permuted_load(const ir::Op& op);  // a permute of a deferred (Shared) load
  void slice(const ir::Op& op);
  void concat(const ir::Op& op);
  void reduce(const ir::Op& op);  // codegen_reduce.cpp
  // A reduction along a non-last axis (or a last axis the shuffle path does not take), x its
  // operand, combine(a, b) one step of it; closes the scope reduce() opened
  // (codegen_reduce_across.cpp).
  void reduce_across(
      const ir::Op& op, const Operand& x,
      const std::function<std::string(const std::string&, const std::string&)>& combine);
  void arg_reduce(const ir::Op& op);  // codegen_scan.cpp
  void scan(const ir::Op& op);
  void sort(const ir::Op& op);  // codegen_sort.cpp
  void mma(const ir::Op& op);   // codegen_mma.cpp
  // How staged_mma stages the operands and which instructions it issues.
  struct StagedMma {
    const char* element;  // the shared-memory element type
    int bytes;            // its size
    int k_step;           // the instruction's k
    int row_pad;          // elements added to each staged row
    bool as_bits;         // 16-bit operands staged as their bit patterns
    const char* frag_a;   // device functions loading an a / b fragment
    const char* frag_b;
    const char* mma;  // the device function issuing one mma
  };
  void staged_mma(const ir::Op& op, const MmaTiling& t, const StagedMma& how);
  // Writes operand i of an mma into shared memory at dst[index(row, col)], as 16-bit patterns
  // (`bits`) or register values.
  void stage_operand(
      const ir::Op& op, size_t i, const std::string& dst,
      const std::function<std::string(const std::string&, const std::string&)>& index, bool bits);
  void zero_region(const std::string& dst, int64_t ld, int64_t r0, int64_t r1, int64_t c0,
                   int64_t c1);
  void load(const ir::Op& op);  // codegen_memory.cpp
  bool prefetches_next_tile(const ir::Op& op) const;
  void store(const ir::Op& op);
  void store_part(const ir::Op& op);   // codegen_store_part.cpp
  void accumulate(const ir::Op& op);   // codegen_accumulate.cpp
  void gather_rows(const ir::Op& op);  // codegen_gather.cpp
  // A deferred (Shared) load, landed in shared memory as the sink says (codegen_memory.cpp).
  // sink(row-major index expressions of the element, value expression in storage type).
  using ElementSink =
      std::function<void(const std::vector<std::string>& idx, const std::string& v)>;
  void load_into(const ir::Op& load, const ElementSink& sink, bool storage_values);
  // The walk over a tile in global memory shared by loads and stores (codegen_memory.cpp).
  struct TileWalk;
  // Fills in the walk over a load's tile that load and load_into share (the mode, and the
  // registers or sink, are theirs).
  void load_walk(const ir::Op& op, TileWalk& w);
  void walk_tile(const TileWalk& w);
  void walk_chunks(const TileWalk& w, bool whole);
  void prefetch_next_tile(const TileWalk& w);
  void for_loop(const ir::Op& op);  // codegen_control.cpp
  // The pipelined mma loop (codegen_pipeline.cpp): the kernel around it, and each side's loop.
  EmittedKernel run_pipelined();
  void producer_loop(const ir::Op& op);
  void consumer_loop(const ir::Op& op);
  void wgmma_function(const MmaPipeline& p);
  // The pipelined mma loop on sm_80/86/89 (codegen_pipeline_sm80.cpp): the kernel around it, the
  // loop, and the cp.async copies of one K step's operand tiles into ring slot `slot`.
  EmittedKernel run_pipelined_sm80();
  void ampere_loop(const ir::Op& op);
  void ampere_copies(const ir::Op& op, const std::string& step, const std::string& slot);
  // The pipelined kernel's epilogue store of an accumulator: staged in shared memory and written
  // by TMA while the consumers go on to the next tile. False when the store does not qualify.
  bool tma_store(const ir::Op& op, const Operand& x);
  // Every kernel's entry on sm_90+, called once by each kernel kind (run, run_pipelined,
  // run_pipelined_sm80, the attention lowering) where its prologue's shared-memory setup ends and
  // before its first global access: the wait for the grids before it on the stream, then the
  // early start of the grid after it (codegen.cpp says why there). Nothing on sm_80.
  void grid_dependency_prologue(EmittedKernel& k);
  // The prefetch ops' L2 warm-up, emitted by grid_dependency_prologue before the wait.
  void l2_prefetches();
  // Pieces every kernel kind writes alike (codegen.cpp): the first comment line (the kernel's
  // name, source line and arch), and the parameters of the ABI (abi.hpp) before any a kind adds.
  void kernel_banner();
  std::string abi_params() const;
  // The pipelined kernels' walk over the output tiles (codegen_pipeline.cpp): `group_rows` tile
  // rows at a time, down each column, so that neighbouring blocks share operand strips in L2.
  // Opened and left open for the caller's body. Each target keeps its own group size.
  void open_grouped_tile_loop(int group_rows);
  void if_op(const ir::Op& op);
  void print(const ir::Op& op);
  // Assigns the yielded values to the variables of the parent's results (or carried values).
  void yield_to(const ir::Op& yield, const std::vector<std::string>& targets,
                const std::vector<Layout>& layouts);

 private:
  friend class AttentionLowering;  // codegen_attention.cpp: the FlashAttention-3 style lowering
  // In a pipelined kernel, the body is emitted twice: once for the producer warp (only the ops
  // it needs, MmaPipeline::producer_ops), once for the consumer warpgroups (all of it).
  enum class Role : uint8_t { All, Producer, Consumer };
  Role role_ = Role::All;
  std::string barrier_stmt_ = "__syncthreads();";
  // The pipelined loop's ring as the software pipeline made it (software_pipeline.hpp): the
  // pipelined lowerings take the stage count, the stage size and each buffer's offset from here.
  LoweredFunction pipelined_;
  const PipelinedLoop& ring() const { return *pipelined_.pipeline; }
  int64_t buffer_offset(size_t buffer) const { return ring().buffers.at(buffer).offset; }
  // Software-pipelines lowered_ with `ring`, verified (verify_lowered), into pipelined_.
  void pipeline(const PipelinedLoop& ring);
  // The TMA-stored output (tma_store), if any, and its staging area: staged_bytes_ bytes after
  // the scratch, in passes of staged_cols_ columns.
  int staged_param_ = -1;
  int64_t staged_bytes_ = 0;
  int staged_cols_ = 0;
  // Loads after the pipelined loop that the consumers issue before it (consumer_loop).
  std::set<const ir::Op*> hoisted_;
  std::string wgmma_fn_;

  void index_ops(const ir::Block& b);
  void name_values();
  void ir_text();
  void header();

  const ir::Function& f_;
  const KernelSpec& spec_;
  const LayoutPlan& plan_;
  // The plan as a lowered form: each value's layout, each conversion an op (lowered.hpp).
  // operand() takes its conversions from here.
  LoweredFunction lowered_;
  std::ostringstream out_;
  int depth_ = 0;
  std::vector<std::string> names_;
  std::vector<const ir::Op*> def_;
  std::set<ir::ValueId> rounded_by_store_;
  std::map<const ir::Op*, int> op_index_;
  std::vector<int> report_origin_;  // report_sites_as
  int64_t stash_room_ = 0;          // limit_stash
  bool reports_errors_ = false;
  std::map<const ir::Op*, std::string> op_text_;
  std::vector<std::string> tile_coords_, param_vars_;
  // Conversions already emitted in the enclosing scopes: (value, layout) -> variable.
  std::vector<std::map<std::pair<ir::ValueId, std::string>, std::string>> converted_;
  // Non-empty while emitting a row-wise kernel's epilogue (epilogue_start) one vector at a time:
  // the variable naming that vector; distributed loops then cover its elements only.
  std::string vector_only_;
  // How many consecutive vectors, from vector_only_ on, each step covers: a streamed pass loads
  // that many vectors under one whole-tile test, so their loads are in flight together.
  int vector_group_ = 1;
  // The vectors a step covers out of `vectors`: the largest of wanted, wanted / 2, ..., 1 that
  // divides them (a thread's 6 vectors go 2 a step when 4 are wanted, not 1).
  static int vectors_a_step(int64_t vectors, int wanted) {
    while (wanted > 1 && vectors % wanted != 0) wanted /= 2;
    return wanted;
  }
  std::vector<bool> streamed_;  // by ValueId
  // Streamed loads kept in shared memory (LayoutPlan::stash_streamed): where, and whether a pass
  // emitted so far has written them there (the later passes read them back).
  struct Stash {
    int64_t offset = 0;
    bool written = false;
  };
  std::map<const ir::Op*, Stash> stash_;
  void plan_stash(const ir::Block& b, size_t tail);
  // The group of vectors vector_only_ names, between registers `regs` and the stash at `offset`
  // (elements in the tile's order, in storage form).
  void stash_vectors(const ir::Op& load, const std::string& regs, int64_t offset, bool write);
  // Registers regs[reg0 + e], e < count, from / into the 32-bit words w[] of their storage form.
  void regs_from_words(DType dt, const std::string& regs, const std::string& reg0, int64_t count);
  void regs_into_words(DType dt, const std::string& regs, const Layout& layout,
                       const std::string& reg0, int64_t count);
  std::vector<std::pair<ir::ValueId, std::string>> remat_names_;  // to restore after a loop
  int remat_scope_ = 0;
  int64_t smem_bytes_ = 0;  // smem_alloc_'s high-water mark
  SmemAllocator smem_alloc_;
  int64_t op_position_ = 0;             // ops emitted so far: the allocator's clock
  const ir::Op* current_op_ = nullptr;  // for the location of errors found while converting
  bool uses_smem_ = false, uses_lane_ = false, uses_warp_ = false, uses_barrier_ = false;
  std::vector<bool> coord_used_;
  std::map<std::string, int> fresh_;
};

}  // namespace tessera::backend::cuda::detail
