#include "tessera/ir/serialize.hpp"

#include <cstring>
#include <mutex>
#include <set>
#include <type_traits>

#include "tessera/ir/verifier.hpp"

namespace tessera::ir {

namespace {

constexpr uint32_t kMagic = 0x52495354;  // "TSIR"
constexpr uint32_t kFormat = 4;  // 2: slice, sort and tf32 attributes; 3: accumulate; 4: prefetch
constexpr unsigned kOpKinds = 0
#define TESSERA_OP(E, mnemonic, nops, nres, nreg, cls) +1
#include "tessera/ir/ops.def"
#undef TESSERA_OP
    ;
constexpr unsigned kDTypes = 0
#define TESSERA_DTYPE(E, name, bytes, cls) +1
#include "tessera/core/dtypes.def"
#undef TESSERA_DTYPE
    ;

#if defined(__GLIBCXX__) && defined(__x86_64__)
// A new field in these structs must be written and read below; the sizes catch one forgotten.
static_assert(sizeof(Attrs) == 176, "Attrs changed: update ir/serialize.cpp, then this size");
static_assert(sizeof(Op) == 272, "Op changed: update ir/serialize.cpp, then this size");
static_assert(sizeof(Param) == 96, "Param changed: update ir/serialize.cpp, then this size");
static_assert(sizeof(Function) == 184, "Function changed: update ir/serialize.cpp, then this size");
#endif

// Source file names live as long as the process: a SourceLoc holds a plain pointer.
const char* intern(std::string name) {
  static std::mutex mu;
  static auto* names = new std::set<std::string>;  // leaked on purpose, like the locations
  std::lock_guard lock(mu);
  return names->insert(std::move(name)).first->c_str();
}

class Writer {
 public:
  template <class T>
  void put(T v) {
    static_assert(std::is_trivially_copyable_v<T>);
    out_.append(reinterpret_cast<const char*>(&v), sizeof v);
  }
  void str(std::string_view s) {
    put<uint64_t>(s.size());
    out_.append(s);
  }
  template <class T>
  void vec(const std::vector<T>& v) {
    put<uint64_t>(v.size());
    for (const T& e : v) put(e);
  }
  void vec(const Shape& v) {  // as a std::vector<int64_t>
    put<uint64_t>(v.size());
    for (int64_t e : v) put(e);
  }
  void type(const Type& t) {
    put(t.dtype);
    vec(t.shape);
  }
  void loc(const SourceLoc& l) {
    str(l.file ? l.file : "");
    put(l.line);
    put(l.column);
  }
  void attrs(const Attrs& a) {
    put(a.axis);
    put(a.param);
    put(a.var);
    vec(a.shape);
    vec(a.perm);
    put(a.value);
    put<uint8_t>(a.exact.has_value());
    put<int64_t>(a.exact.value_or(0));
    put<uint8_t>(a.padded);
    put<uint8_t>(a.exclusive);
    put<uint8_t>(a.descending);
    put<uint8_t>(a.at_element);
    put(a.start);
    put(a.length);
    put<uint8_t>(a.tf32);
    put(a.dtype);
    str(a.text);
  }
  void block(const Block& b) {
    vec(b.args);
    put<uint64_t>(b.ops.size());
    for (const Op& op : b.ops) {
      put(op.kind);
      vec(op.operands);
      vec(op.results);
      put<uint64_t>(op.regions.size());
      for (const Block& r : op.regions) block(r);
      attrs(op.attrs);
      loc(op.loc);
    }
  }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

// Every read checks the bytes left; a failed one sets ok_ and reads zeros from then on.
class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}
  bool ok() const { return ok_; }
  bool at_end() const { return in_.empty(); }

  template <class T>
  T get() {
    static_assert(std::is_trivially_copyable_v<T>);
    T v{};
    if (!ok_ || in_.size() < sizeof v) return fail(), v;
    std::memcpy(&v, in_.data(), sizeof v);
    in_.remove_prefix(sizeof v);
    return v;
  }
  // A count of items of at least `min_bytes` each: more than the bytes left can hold is damage.
  size_t count(size_t min_bytes) {
    const auto n = get<uint64_t>();
    if (n > in_.size() / (min_bytes ? min_bytes : 1)) return fail(), 0;
    return static_cast<size_t>(n);
  }
  std::string str() {
    const size_t n = count(1);
    std::string s(in_.substr(0, n));
    in_.remove_prefix(n);
    return s;
  }
  template <class T>
  std::vector<T> vec() {
    std::vector<T> v(count(sizeof(T)));
    for (T& e : v) e = get<T>();
    return v;
  }
  DType dtype() {
    const auto d = get<DType>();
    if (static_cast<unsigned>(d) >= kDTypes) fail();
    return d;
  }
  template <class E>
  E enumeration(unsigned limit) {
    const auto e = get<E>();
    if (static_cast<unsigned>(e) >= limit) fail();
    return e;
  }
  Type type() {
    Type t;
    t.dtype = dtype();
    t.shape = vec<int64_t>();
    return t;
  }
  SourceLoc loc() {
    SourceLoc l;
    const std::string file = str();
    l.file = intern(file);
    l.line = get<uint32_t>();
    l.column = get<uint32_t>();
    return l;
  }
  Attrs attrs() {
    Attrs a;
    a.axis = get<int>();
    a.param = get<int>();
    a.var = get<int>();
    a.shape = vec<int64_t>();
    a.perm = vec<int64_t>();
    a.value = get<double>();
    const bool exact = get<uint8_t>() != 0;
    const auto exact_value = get<int64_t>();
    if (exact) a.exact = exact_value;
    a.padded = get<uint8_t>() != 0;
    a.exclusive = get<uint8_t>() != 0;
    a.descending = get<uint8_t>() != 0;
    a.at_element = get<uint8_t>() != 0;
    a.start = get<int64_t>();
    a.length = get<int64_t>();
    a.tf32 = get<uint8_t>() != 0;
    a.dtype = dtype();
    a.text = str();
    return a;
  }
  Block block(int depth) {
    Block b;
    if (depth > 256) return fail(), b;  // deeper than any traced kernel: damage
    b.args = vec<ValueId>();
    const size_t ops = count(1);
    b.ops.reserve(ops);
    for (size_t i = 0; i < ops && ok_; ++i) {
      Op op;
      op.kind = enumeration<OpKind>(kOpKinds);
      op.operands = vec<ValueId>();
      op.results = vec<ValueId>();
      const size_t regions = count(1);
      for (size_t r = 0; r < regions && ok_; ++r) op.regions.push_back(block(depth + 1));
      op.attrs = attrs();
      op.loc = loc();
      b.ops.push_back(std::move(op));
    }
    return b;
  }

 private:
  void fail() { ok_ = false; }
  std::string_view in_;
  bool ok_ = true;
};

}  // namespace

std::string serialize(const Function& f) {
  Writer w;
  w.put(kMagic);
  w.put(kFormat);
  w.str(f.name);
  w.put<uint64_t>(f.params.size());
  for (const Param& p : f.params) {
    w.str(p.name);
    w.put(p.kind);
    w.put(p.dtype);
    w.put(p.rank);
    w.vec(p.tile_shape);
    w.put(p.grid_rank);
  }
  w.put(f.grid_rank);
  w.put(f.numerics);
  w.put<uint64_t>(f.values.size());
  for (const Type& t : f.values) w.type(t);
  w.put<uint64_t>(f.vars.size());
  for (const Type& t : f.vars) w.type(t);
  w.block(f.body);
  w.put(f.stage);
  w.loc(f.loc);
  return w.take();
}

std::optional<Function> deserialize(std::string_view bytes) {
  Reader r(bytes);
  if (r.get<uint32_t>() != kMagic || r.get<uint32_t>() != kFormat) return std::nullopt;
  Function f;
  f.name = r.str();
  const size_t params = r.count(1);
  for (size_t i = 0; i < params && r.ok(); ++i) {
    Param p;
    p.name = r.str();
    p.kind = r.enumeration<ParamKind>(4);
    p.dtype = r.dtype();
    p.rank = r.get<int>();
    p.tile_shape = r.vec<int64_t>();
    p.grid_rank = r.get<int>();
    f.params.push_back(std::move(p));
  }
  f.grid_rank = r.get<int>();
  f.numerics = r.enumeration<Numerics>(2);
  const size_t values = r.count(1);
  for (size_t i = 0; i < values && r.ok(); ++i) f.values.push_back(r.type());
  const size_t vars = r.count(1);
  for (size_t i = 0; i < vars && r.ok(); ++i) f.vars.push_back(r.type());
  f.body = r.block(0);
  f.stage = r.enumeration<Stage>(2);
  f.loc = r.loc();
  if (!r.ok() || !r.at_end()) return std::nullopt;
  // Indices into values, params and vars, region shapes, types: all the verifier's rules.
  try {
    if (verify(f)) return std::nullopt;
  } catch (const std::exception&) {  // an index the verifier trips on before it can report
    return std::nullopt;
  }
  return f;
}

}  // namespace tessera::ir
