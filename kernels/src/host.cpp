#include "host.hpp"

namespace tessera::kernels::detail {

void require(bool ok, SourceLoc loc, const std::string& message) {
  if (!ok) fail_at<UsageError>(loc, message);
}

void require_nonempty(const char* fn, const char* arg, const Shape& shape, int rank,
                      SourceLoc loc) {
  if (static_cast<int>(shape.size()) < rank || numel(shape) == 0)
    fail_at<UsageError>(loc, fn, ": '", arg, "' has shape ", to_string(shape), "; it needs rank ",
                        rank, " or more and at least one element");
}

void require_shape(const char* fn, const char* arg, const Shape& got, const Shape& want,
                   SourceLoc loc) {
  if (got != want)
    fail_at<UsageError>(loc, fn, ": '", arg, "' has shape ", to_string(got),
                        " but must have shape ", to_string(want));
}

void require_same_device(const char* fn, const char* arg, Device got, Device want, SourceLoc loc) {
  if (got != want)
    fail_at<UsageError>(loc, fn, ": '", arg, "' is on ", got.str(),
                        " but the first argument is on ", want.str(),
                        "; copy it there with t.to(device)");
}

}  // namespace tessera::kernels::detail
