#!/usr/bin/env bash
# Uses Tessera the ways a user's project does, from a finished build of this tree (CI runs it after
# scripts/test.sh, reusing its build folder):
#   1. installed: `cmake --install` into a temporary folder, which is then moved (the package must
#      be relocatable), and examples/consumer built against it with find_package(Tessera);
#   2. FetchContent: examples/consumer built with Tessera added by FetchContent from this checkout
#      (FETCHCONTENT_SOURCE_DIR_TESSERA: no network), with Tessera's tests and examples left out;
#   3. `tessera new`: the installed tool writes a project, which is built and tested with the two
#      commands its README gives.
# Each step prints one line; a failing one prints its log. BUILD_DIR (default build) picks the build
# folder; the FetchContent build is kept in <build>-fetch, so a second run rebuilds nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
build=${BUILD_DIR:-build}
case $build in /*) ;; *) build=$root/$build ;; esac
if [ -z "${CMAKE_CXX_COMPILER_LAUNCHER:-}" ] && command -v ccache >/dev/null; then
  export CMAKE_CXX_COMPILER_LAUNCHER=ccache
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
jobs=$(nproc)

# step NAME COMMAND...: runs COMMAND with its output in a log; prints one line, and the log when it
# fails.
step() {
  local name=$1 log="$work/$1.log"
  shift
  local start=$SECONDS
  if "$@" >"$log" 2>&1; then
    echo "consumer_check: $name: ok ($((SECONDS - start)) s)"
  else
    cat "$log"
    echo "consumer_check: $name: FAILED (log above)"
    exit 1
  fi
}

install_package() {
  cmake --install "$build" --prefix "$work/staging"
  # Relocatable: nothing in the package may name the folder it was installed into.
  mv "$work/staging" "$work/prefix"
  if grep -rl "$work/staging" "$work/prefix/lib" --include='*.cmake'; then
    echo "the package names the folder it was installed into (listed above)"
    return 1
  fi
}

build_installed_consumer() {
  cmake -S examples/consumer -B "$work/consumer" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix"
  cmake --build "$work/consumer" -j "$jobs"
  ctest --test-dir "$work/consumer" --output-on-failure
}

build_fetched_consumer() {
  local fetch=$build-fetch
  # The same build type and warning flags as the main build: ccache then has Tessera's objects.
  cmake -S examples/consumer -B "$fetch" -G Ninja -DCONSUMER_FETCH=ON \
    -DFETCHCONTENT_SOURCE_DIR_TESSERA="$root" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DTESSERA_WERROR="${TESSERA_WERROR:-OFF}"
  if [ -d "$fetch/_deps/tessera-build/tests" ] || [ -d "$fetch/_deps/tessera-build/examples" ]; then
    echo "Tessera added by FetchContent configured its tests or examples (they must be off)"
    return 1
  fi
  cmake --build "$fetch" -j "$jobs"
  ctest --test-dir "$fetch" --output-on-failure
}

# The README's commands, run as a user would paste them, in the project's folder.
build_new_project() {
  (cd "$work" && "$work/prefix/bin/tessera" new demo_project)
  local commands
  commands=$(sed -n '/^```sh$/,/^```$/p' "$work/demo_project/README.md" | grep -v '^```')
  grep -q "CMAKE_PREFIX_PATH=$work/prefix " <<<"$commands" || {
    echo "the README does not point CMake at the installed package:"
    echo "$commands"
    return 1
  }
  (cd "$work/demo_project" && bash -euxo pipefail -c "$commands")
  "$work/demo_project/build/demo_project"
  # And it refuses to write over the project it made.
  if (cd "$work" && "$work/prefix/bin/tessera" new demo_project); then
    echo "tessera new wrote over an existing project"
    return 1
  fi
}

step "install (relocated)" install_package
step "find_package consumer" build_installed_consumer
step "FetchContent consumer" build_fetched_consumer
step "tessera new" build_new_project
