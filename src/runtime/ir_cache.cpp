#include "ir_cache.hpp"

#include <elf.h>
#include <link.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "tessera/ir/serialize.hpp"
#include "tessera/runtime/env.hpp"
#include "tessera/runtime/jit_cache.hpp"

namespace tessera::runtime::ir_cache {

namespace {

struct Module {
  std::string build_id;  // hex; empty when the module has none
  uintptr_t offset = 0;  // of the address from the module's load address
};

// The build id of a module's PT_NOTE segments (NT_GNU_BUILD_ID), in hex.
std::string build_id(const dl_phdr_info& info) {
  for (int i = 0; i < info.dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info.dlpi_phdr[i];
    if (ph.p_type != PT_NOTE) continue;
    const char* at = reinterpret_cast<const char*>(info.dlpi_addr + ph.p_vaddr);
    const char* end = at + ph.p_memsz;
    while (at + sizeof(ElfW(Nhdr)) <= end) {
      ElfW(Nhdr) note;
      std::memcpy(&note, at, sizeof note);
      const char* name = at + sizeof note;
      const char* desc = name + ((note.n_namesz + 3) & ~3u);
      const char* next = desc + ((note.n_descsz + 3) & ~3u);
      if (next > end) break;
      if (note.n_type == NT_GNU_BUILD_ID && note.n_namesz == 4 &&
          std::memcmp(name, "GNU", 4) == 0) {
        std::string hex;
        for (uint32_t b = 0; b < note.n_descsz; ++b) {
          static constexpr char kDigits[] = "0123456789abcdef";
          const auto byte = static_cast<unsigned char>(desc[b]);
          hex += kDigits[byte >> 4];
          hex += kDigits[byte & 15];
        }
        return hex;
      }
      at = next;
    }
  }
  return {};
}

// The module (program or shared library) whose loaded segments hold `address`.
Module module_of(const void* address) {
  struct Search {
    uintptr_t address;
    Module found;
  } search{reinterpret_cast<uintptr_t>(address), {}};
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) -> int {
        auto& s = *static_cast<Search*>(data);
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr)& ph = info->dlpi_phdr[i];
          const uintptr_t lo = info->dlpi_addr + ph.p_vaddr;
          if (ph.p_type == PT_LOAD && s.address >= lo && s.address < lo + ph.p_memsz) {
            s.found = {build_id(*info), s.address - info->dlpi_addr};
            return 1;
          }
        }
        return 0;
      },
      &search);
  return search.found;
}

// This runtime's own module, found once.
const Module& runtime_module() {
  static const Module m = module_of(reinterpret_cast<const void*>(&module_of));
  return m;
}

}  // namespace

std::string key(const void* identity, std::string_view specialization, Device /*device*/) {
  const char* mode = std::getenv("TESSERA_IR_CACHE");
  const std::string_view m = mode ? mode : "";
  if (m != "on") return {};
  if (env_list_has("TESSERA_CHECK", "trace") || dump_enabled("traced") ||
      dump_enabled("promote_locals") || dump_enabled("canonical_order") || dump_enabled("ir") ||
      !env_list("TESSERA_NVRTC_CHECK").empty())
    return {};
  const Module kernel = module_of(identity);
  if (kernel.build_id.empty() || runtime_module().build_id.empty()) return {};
  std::string program = "kernel module " + kernel.build_id + " at " +
                        std::to_string(kernel.offset) + "\nruntime module " +
                        runtime_module().build_id + "\nspecialization ";
  program.append(specialization);
  return jit_key({program, "", "ir", 0, ""});
}

std::shared_ptr<const CompiledKernel> find(const std::string& key, Device device,
                                           std::string_view label) {
  const JitCache::Blob blob = JitCache::global().find(key, label);
  if (!blob) return nullptr;
  std::optional<ir::Function> f = ir::deserialize({blob->data(), blob->size()});
  if (!f) {
    if (log_enabled("jit"))
      std::fprintf(stderr, "tessera jit: the stored IR of %.*s does not read back; tracing it\n",
                   static_cast<int>(label.size()), label.data());
    return nullptr;
  }
  return std::make_shared<const CompiledKernel>(CompiledKernel{std::move(*f), device});
}

void store(const std::string& key, const CompiledKernel& kernel, std::string_view label) {
  const std::string bytes = ir::serialize(kernel.fn);
  JitCache::global().put(key, label, std::vector<char>(bytes.begin(), bytes.end()));
}

}  // namespace tessera::runtime::ir_cache
