// tessera_dlpack_example: a Tessera kernel called from Python on torch.Tensors, numpy arrays or any
// object with __dlpack__, on the CPU or a CUDA GPU, without copying them.
//
//   add(x, y, stream=None)          -> a new array x + y, made by Tessera (hand it to
//                                      torch.from_dlpack or numpy.from_dlpack; no copy either way)
//   add_into(out, x, y, stream=None)   writes x + y into the caller's own array `out`
//
// x, y and out are 1-D float32 arrays of one length on one device. Each is taken through DLPack
// (x.__dlpack__()); Tessera owns what it took until the call returns, then runs the producer's
// deleter. `out` is partitioned as the kernel's output, which needs the only handle on Tessera's
// side: passing the same array as out and x is refused (an output may not also be an input).
//
// Streams, on a GPU. With `stream` (PyTorch: torch.cuda.current_stream().cuda_stream; 0, the
// legacy default stream, is taken as DLPack's 1): the kernel is queued on that stream (adopted,
// Stream::adopt_unchecked) and the call returns at once, with no copy and no synchronization. The
// arrays are taken with __dlpack__(stream=...) and given back to their producer in that stream's
// order (from_dlpack_unchecked with the stream: torch's caching allocator reuses memory in its
// stream's order, so nothing waits on the host); the result's __dlpack__(stream=s) orders the
// consumer's stream s after the kernel on the device. So torch's work before the call and after it
// is ordered by the stream alone, as for torch's own kernels; to read a result on the host, do what
// torch needs anyway (torch.cuda.synchronize(), or .cpu()). The caller must not hand the arrays
// to another stream meanwhile without torch's usual record_stream.
// Without `stream` (and on the CPU): Tessera's own stream, and the functions return once the
// kernel is done; the caller must have finished writing the inputs first.
#include <dlpack/dlpack.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <utility>

#include <tessera/tessera.hpp>

namespace py = pybind11;
using namespace tessera;
using namespace tessera::tile;

namespace {

TESSERA_KERNEL(add_kernel, Out<float> z, In<float> x, In<float> y) {
  z.store(load_like(x, z) + load_like(y, z));
};

constexpr const char* kCapsule = "dltensor";           // DLPack's name for a fresh capsule
constexpr const char* kUsedCapsule = "used_dltensor";  // ...and for one a consumer took

// The Tessera tensor lent by `array` (argument `name` of `function`): its DLManagedTensor becomes
// Tessera's, and the capsule is marked used, so that only Tessera runs its deleter.
Tensor<float, 1> take(py::handle array, const char* function, const char* name,
                      const std::optional<Stream>& stream) {
  if (!py::hasattr(array, "__dlpack__"))
    throw py::type_error(std::string(function) + ": " + name + " is a " +
                         std::string(py::str(py::type::handle_of(array).attr("__name__"))) +
                         ", which has no __dlpack__; pass a torch.Tensor, a numpy array or "
                         "another DLPack array");
  // On a stream, the producer makes the array ready on it (DLPack's stream argument).
  py::object capsule =
      stream ? array.attr("__dlpack__")(py::arg("stream") =
                                            reinterpret_cast<intptr_t>(stream->native()))
             : array.attr("__dlpack__")();
  if (!PyCapsule_IsValid(capsule.ptr(), kCapsule))
    throw py::value_error(std::string(function) + ": " + name +
                          ".__dlpack__() did not return an unused 'dltensor' capsule");
  auto* managed = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule.ptr(), kCapsule));
  // On an error the capsule still owns the tensor (and frees it when it dies).
  Tensor<float> t =
      stream ? from_dlpack_unchecked<float>(managed, *stream) : from_dlpack<float>(managed);
  PyCapsule_SetName(capsule.ptr(), kUsedCapsule);
  if (t.rank() != 1)
    throw py::value_error(std::string(function) + ": " + name + " has rank " +
                          std::to_string(t.rank()) + "; pass 1-D arrays (x.reshape(-1))");
  return Tensor<float, 1>(t);
}

// A capsule that owns a DLManagedTensor until a consumer takes it (and renames it).
py::capsule capsule_of(DLManagedTensor* managed) {
  return py::capsule(managed, kCapsule, [](PyObject* capsule) {
    if (!PyCapsule_IsValid(capsule, kCapsule)) return;  // taken: the consumer owns it now
    auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, kCapsule));
    if (m->deleter) m->deleter(m);
  });
}

// A Tessera tensor offered to Python through the DLPack protocol (__dlpack__, __dlpack_device__).
// Each __dlpack__ call exports a view that holds one more handle to the storage.
struct Array {
  Tensor<float> tensor;

  // `stream` is the consumer's stream (DLPack: 1 is the legacy default stream, 2 the per-thread
  // one, None: any): the export orders it after the kernel, on the device; without one the host
  // waits for the kernel. Newer consumers may also pass max_version, dl_device and copy.
  py::capsule dlpack(const py::args&, const py::kwargs& kwargs) const {
    if (tensor.device().is_cuda() && kwargs.contains("stream") && !kwargs["stream"].is_none()) {
      const auto s = kwargs["stream"].cast<intptr_t>();
      if (s != 0 && s != -1)  // -1: the consumer asks for no ordering; 0 is not a DLPack stream
        return capsule_of(to_dlpack(
            tensor, Stream::adopt_unchecked(tensor.device(), reinterpret_cast<void*>(s))));
    }
    return capsule_of(to_dlpack(tensor));
  }
  py::tuple dlpack_device() const {
    const Device d = tensor.device();
    return py::make_tuple(d.is_cuda() ? static_cast<int>(kDLCUDA) : static_cast<int>(kDLCPU),
                          d.is_cuda() ? d.index() : 0);
  }
};

// Elements each tile block adds.
constexpr int64_t kTile = 1024;

// The stream a call's kernel goes to: `stream` (a CUstream as an int, torch's cuda_stream) when
// the arrays are on a GPU and one is given; 0, torch's legacy default stream, is CU_STREAM_LEGACY
// (1, DLPack's name for it). None: Tessera's own stream, and the call waits (see the top).
std::optional<Stream> stream_for(py::handle first_array, const py::object& stream) {
  if (stream.is_none()) return std::nullopt;
  const auto device = first_array.attr("__dlpack_device__")().cast<py::tuple>();
  if (device[0].cast<int>() != static_cast<int>(kDLCUDA)) return std::nullopt;
  auto s = stream.cast<intptr_t>();
  if (s == 0) s = 1;  // CU_STREAM_LEGACY
  return Stream::adopt_unchecked(Device::cuda(device[1].cast<int>()), reinterpret_cast<void*>(s));
}

void check_same_length(const char* function, const Tensor<float, 1>& a, const char* a_name,
                       const Tensor<float, 1>& b, const char* b_name) {
  if (a.dim(0) != b.dim(0))
    throw py::value_error(std::string(function) + ": " + a_name + " has " +
                          std::to_string(a.dim(0)) + " elements but " + b_name + " has " +
                          std::to_string(b.dim(0)) + "; pass arrays of one length");
}

Array add(py::handle x_array, py::handle y_array, const py::object& stream_arg) {
  const std::optional<Stream> stream = stream_for(x_array, stream_arg);
  Tensor<float, 1> x = take(x_array, "add", "x", stream);
  Tensor<float, 1> y = take(y_array, "add", "y", stream);
  check_same_length("add", x, "x", y, "y");
  auto z = empty<float>({x.dim(0)}, x.device());
  if (!stream) {
    auto [z1, x1, y1] = add_kernel(std::move(z).partition({kTile}), x, y).sync();
    return Array{std::move(z1).unpartition()};
  }
  // Queued on the caller's stream; the arrays go back to their producer in its order.
  StreamScope on(*stream);
  auto [z1, x1, y1] =
      add_kernel(std::move(z).partition({kTile}), std::move(x), std::move(y)).chain();
  return Array{std::move(z1).unpartition()};
}

void add_into(py::handle out_array, py::handle x_array, py::handle y_array,
              const py::object& stream_arg) {
  const std::optional<Stream> stream = stream_for(out_array, stream_arg);
  Tensor<float, 1> out = take(out_array, "add_into", "out", stream);
  Tensor<float, 1> x = take(x_array, "add_into", "x", stream);
  Tensor<float, 1> y = take(y_array, "add_into", "y", stream);
  check_same_length("add_into", out, "out", x, "x");
  check_same_length("add_into", out, "out", y, "y");
  if (!stream) {
    (void)add_kernel(std::move(out).partition({kTile}), x, y).sync();
    return;
  }
  StreamScope on(*stream);
  (void)add_kernel(std::move(out).partition({kTile}), std::move(x), std::move(y)).chain();
}

}  // namespace

PYBIND11_MODULE(tessera_dlpack_example, m) {
  m.doc() = "A Tessera kernel (elementwise add) on DLPack arrays: torch.Tensor, numpy.ndarray, ...";
  py::class_<Array>(m, "Array",
                    "A Tessera tensor, readable through DLPack (torch.from_dlpack, "
                    "numpy.from_dlpack)")
      .def("__dlpack__", &Array::dlpack)
      .def("__dlpack_device__", &Array::dlpack_device);
  m.def("add", &add, py::arg("x"), py::arg("y"), py::arg("stream") = py::none(),
        "x + y as a new array, made by a Tessera kernel on the arrays' device; on a GPU with "
        "stream (torch.cuda.current_stream().cuda_stream) queued on that stream, no wait");
  m.def("add_into", &add_into, py::arg("out"), py::arg("x"), py::arg("y"),
        py::arg("stream") = py::none(),
        "Writes x + y into out (an array of the same shape and device), with a Tessera kernel; "
        "on a GPU with stream queued on that stream, no wait");
  m.def(
      "device", [] { return default_device().str(); }, "Tessera's default device");
}
