"""Prints each CTest test labelled gpu as `name<TAB>command`, one a line, from
`ctest --show-only=json-v1` on stdin. The command sets the test's ENVIRONMENT property itself
(`env K=V ... exe args`), so it runs as CTest would run it. With --relocate FROM TO, paths under
the build folder FROM are rewritten to start with TO (for a build packed elsewhere). Tests of a
binary that was not built (a build of some targets only) have no command: they are left out, and
counted on stderr."""
import argparse
import json
import shlex
import sys

parser = argparse.ArgumentParser()
parser.add_argument("--relocate", nargs=2, metavar=("FROM", "TO"))
args = parser.parse_args()

not_built = 0
for test in json.load(sys.stdin)["tests"]:
    if "command" not in test:
        not_built += 1
        continue
    command = test["command"]
    if args.relocate:
        src, dst = args.relocate[0].rstrip("/") + "/", args.relocate[1].rstrip("/") + "/"
        command = [c.replace(src, dst) for c in command]
    env = []
    for prop in test.get("properties", []):
        if prop["name"] == "ENVIRONMENT":
            env += prop["value"]
    print(test["name"] + "\t" + shlex.join((["env"] + env if env else []) + command))
if not_built:
    print(f"list_gpu_tests: {not_built} tests left out (their binaries were not built)", file=sys.stderr)
