// Modules: the images linked in by tessera_add_simt_kernels, or one compiled by NVRTC, loaded
// lazily on one GPU, with their functions found by kernel name.
#include "tessera/simt/module.hpp"

#include <cstring>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "tessera/core/error.hpp"

namespace tessera::simt {

namespace detail {

namespace {

std::vector<EmbeddedImage>& registry() {
  static std::vector<EmbeddedImage> images;  // filled before main() by generated code
  return images;
}

}  // namespace

bool register_embedded_image(const char* name, const unsigned char* data, size_t size) {
  registry().push_back({name, data, size});
  return true;
}

class ModuleState {
 public:
  struct Image {
    std::string name;
    const void* data = nullptr;
    size_t size = 0;
    std::vector<char> owned;  // NVRTC's cubin
    void* loaded = nullptr;
    bool ahead_of_time = false;
  };

  Device device = Device::cpu();
  int ordinal = 0;
  DeviceLimits limits;
  std::string origin;  // where the kernels come from, for messages
  std::vector<Image> images;

  const FunctionInfo& function(std::string_view kernel) {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = functions_.find(kernel); it != functions_.end()) return it->second;
    const std::string entry = "tessera_simt_" + std::string(kernel);
    DriverBridge& bridge = driver_bridge();
    void* found = nullptr;
    const Image* found_in = nullptr;
    for (Image& image : images) {
      if (!image.loaded)
        image.loaded = bridge.load_module(ordinal, image.data, image.size, image.name);
      void* f = bridge.find_function(image.loaded, entry);
      if (!f) continue;
      if (found)
        fail<UsageError>("kernel '", kernel, "' is defined in two images, ", found_in->name,
                         " and ", image.name, "; give the two kernels different names.");
      found = f;
      found_in = &image;
    }
    if (!found)
      fail<UsageError>("kernel '", kernel, "' (entry ", entry, ") is not in ", origin,
                       "; define it with TESSERA_SIMT_DEFINE in a .cu file that "
                       "tessera_add_simt_kernels adds to this program, or compile its source "
                       "with Module::nvrtc.");
    FunctionInfo info;
    info.function = found;
    info.limits = bridge.function_limits(ordinal, found);
    info.image = found_in->name;
    info.ahead_of_time = found_in->ahead_of_time;
    info.signature = bridge.read_global(ordinal, found_in->loaded,
                                        "tessera_simt_signature_" + std::string(kernel));
    return functions_.emplace(std::string(kernel), info).first->second;
  }

 private:
  std::mutex mu_;
  std::map<std::string, FunctionInfo, std::less<>> functions_;
};

namespace {

// A state for `device`, which must be a GPU that can run SIMT kernels.
std::shared_ptr<ModuleState> open(Device device) {
  if (!device.is_cuda())
    fail<UsageError>("SIMT kernels run on CUDA devices, and ", device.str(),
                     " is not one; pass Device::cuda(i).");
  DriverBridge& bridge = driver_bridge();
  std::string why;
  if (!bridge.usable(device.index(), &why))
    fail<UsageError>("SIMT kernels need a CUDA GPU, and ", device.str(), " cannot be used: ", why);
  auto s = std::make_shared<ModuleState>();
  s->device = device;
  s->ordinal = device.index();
  s->limits = bridge.device_limits(device.index());
  return s;
}

bool is_simt_include(std::string_view line) {
  size_t i = line.find_first_not_of(" \t");
  if (i == std::string_view::npos || line[i] != '#') return false;
  line.remove_prefix(i + 1);
  i = line.find_first_not_of(" \t");
  if (i == std::string_view::npos || line.substr(i, 7) != "include") return false;
  return line.find("tessera/simt/") != std::string_view::npos;
}

}  // namespace

std::string nvrtc_translation_unit(std::string_view declarations, std::string_view source,
                                   std::string_view name) {
  std::string unit = "#line 1 \"tessera-simt-device-api\"\n";
  unit += device_api_source();
  unit += "\n#line 1 \"tessera-simt-declarations\"\n";
  unit += "// The kernels' declarations, spelled from the host's types.\n";
  unit += declarations;
  unit += "#line 1 \"";
  unit += name;
  unit += "\"\n";
  // Blank the includes of our own headers (their text is above), keeping line numbers.
  size_t pos = 0;
  while (pos <= source.size()) {
    size_t end = source.find('\n', pos);
    if (end == std::string_view::npos) end = source.size();
    const std::string_view line = source.substr(pos, end - pos);
    if (!is_simt_include(line)) unit += line;
    unit += '\n';
    pos = end + 1;
  }
  return unit;
}

namespace {

// The element types of signature.hpp's type_code, by their letter.
std::string type_name(unsigned char code) {
  static constexpr std::pair<char, const char*> kNames[] = {
      {'b', "bool"},         {'c', "char"},          {'a', "signed char"},
      {'s', "short"},        {'i', "int"},           {'l', "long"},
      {'x', "long long"},    {'h', "unsigned char"}, {'t', "unsigned short"},
      {'j', "unsigned int"}, {'m', "unsigned long"}, {'y', "unsigned long long"},
      {'f', "float"},        {'d', "double"}};
  for (const auto& [letter, name] : kNames)
    if (static_cast<unsigned char>(letter) == code) return name;
  return "an unknown type";
}

// A parameter in words: "an output DisjointSpan<float>".
std::string describe(const ParamCode& p) {
  const std::string t = type_name(p.type);
  switch (p.kind) {
    case 'W':
      return "the thread-index witness";
    case 'O':
      return (p.rank == 2 ? "an output DisjointSpan2D<" : "an output DisjointSpan<") + t + ">";
    case 'I':
      return (p.rank == 2 ? "an input Span2D<const " : "an input Span<const ") + t + ">";
    case 'S':
      return "a scalar " + t;
    case 'P':
      return "a mutable pointer " + t + "*";
    case 'C':
      return "a pointer const " + t + "*";
    default:
      return "an unknown parameter kind";
  }
}

bool same(const ParamCode& a, const ParamCode& b) {
  return a.kind == b.kind && a.rank == b.rank && a.type == b.type;
}

}  // namespace

void check_signature(std::string_view kernel, std::string_view params, const SignatureRecord& host,
                     const FunctionInfo& found) {
  const std::string stale =
      tessera::detail::cat("; rebuild ", found.image, " against the current declaration of '",
                           kernel, "' (its .cu was compiled against an older one).");
  if (!found.signature) {
    if (!found.ahead_of_time) return;  // NVRTC compiled it from the host's own declaration
    fail<UsageError>("kernel '", kernel, "' in ", found.image,
                     " carries no signature record (tessera_simt_signature_", kernel,
                     "), so its parameters cannot be checked against the host's declaration; "
                     "rebuild it with this version of Tessera's TESSERA_SIMT_DEFINE.");
  }
  SignatureRecord image;
  if (found.signature->size() != sizeof image)
    fail<UsageError>("kernel '", kernel, "' in ", found.image, " carries a signature record of ",
                     found.signature->size(), " bytes, but this Tessera's is ", sizeof image,
                     " bytes; rebuild it with this version of Tessera.");
  std::memcpy(&image, found.signature->data(), sizeof image);
  if (image.version != host.version)
    fail<UsageError>("kernel '", kernel, "' in ", found.image, " carries signature version ",
                     image.version, ", but this Tessera reads version ", host.version,
                     "; rebuild it with this version of Tessera.");
  const std::vector<std::string> names = param_names(params);
  auto name = [&](unsigned i) {
    return i < names.size() ? "'" + names[i] + "'" : tessera::detail::cat("#", i);
  };
  if (image.count != host.count)
    fail<UsageError>("kernel '", kernel, "' in ", found.image, " was compiled with ", image.count,
                     " parameters, but the host declares ", host.count, " (", params, ")", stale);
  for (unsigned i = 0; i < host.count && i < kSignatureMaxParams; ++i)
    if (!same(image.params[i], host.params[i]))
      fail<UsageError>("kernel '", kernel, "': parameter ", name(i), " (#", i + 1,
                       ") was compiled in ", found.image, " as ", describe(image.params[i]),
                       ", but the host declares it ", describe(host.params[i]), stale);
  if (image.witness != host.witness)
    fail<UsageError>("kernel '", kernel, "': its witness ", name(0), " was compiled in ",
                     found.image, " with another index space (kind ", image.witness,
                     ") than the host declares (kind ", host.witness, ")", stale);
}

}  // namespace detail

Module Module::embedded(Device device) {
  // One per device for the whole process: the images are loaded once (modules are never
  // unloaded), and every caller shares the functions found in them.
  static std::mutex mu;
  // (Keyed by the bridge too, so that a test's fake driver never hands out its handles later.)
  static std::map<std::pair<const void*, int>, std::shared_ptr<detail::ModuleState>> loaded;
  auto s = detail::open(device);
  const std::pair<const void*, int> key{&detail::driver_bridge(), s->ordinal};
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = loaded.find(key); it != loaded.end()) return Module(it->second);
  std::string names;
  for (const detail::EmbeddedImage& image : detail::registry()) {
    detail::ModuleState::Image i;
    i.name = image.name;
    i.data = image.data;
    i.size = image.size;
    i.ahead_of_time = true;
    s->images.push_back(std::move(i));
    names += (names.empty() ? "" : ", ") + std::string(image.name);
  }
  s->origin = names.empty() ? std::string("this program, which links no SIMT images")
                            : "the SIMT images linked into this program (" + names + ")";
  loaded.emplace(key, s);
  return Module(std::move(s));
}

Module Module::from_source(const std::string& unit, std::string_view name, Device device) {
  auto s = detail::open(device);
  detail::ModuleState::Image i;
  i.name = std::string(name);
  i.owned = detail::driver_bridge().compile(s->ordinal, unit, i.name);
  i.data = i.owned.data();
  i.size = i.owned.size();
  s->images.push_back(std::move(i));
  s->origin = "the NVRTC source '" + std::string(name) + "'";
  return Module(std::move(s));
}

Device Module::device() const {
  return state_->device;
}
int Module::ordinal() const {
  return state_->ordinal;
}
const DeviceLimits& Module::device_limits() const {
  return state_->limits;
}
const detail::FunctionInfo& Module::function(std::string_view kernel) const {
  return state_->function(kernel);
}

}  // namespace tessera::simt
