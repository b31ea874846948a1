"""Prints each CTest test labelled gpu as `name<TAB>command`, one a line, from
`ctest --show-only=json-v1` on stdin. The command sets the test's ENVIRONMENT property itself
(`env K=V ... exe args`), so it runs as CTest would run it. With --relocate FROM TO, paths under
the build folder FROM are rewritten to start with TO (for a build packed elsewhere)."""
import argparse
import json
import shlex
import sys

parser = argparse.ArgumentParser()
parser.add_argument("--relocate", nargs=2, metavar=("FROM", "TO"))
args = parser.parse_args()

for test in json.load(sys.stdin)["tests"]:
    command = test["command"]
    if args.relocate:
        src, dst = args.relocate[0].rstrip("/") + "/", args.relocate[1].rstrip("/") + "/"
        command = [c.replace(src, dst) for c in command]
    env = []
    for prop in test.get("properties", []):
        if prop["name"] == "ENVIRONMENT":
            env += prop["value"]
    print(test["name"] + "\t" + shlex.join((["env"] + env if env else []) + command))
