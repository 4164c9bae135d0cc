#!/usr/bin/env python3
"""Where a Bazel run's time went, from its JSON trace profile.

    bazel test --profile=/tmp/fast.json ...      (or `build --profile=...` in user.bazelrc)
    tools/bench/build_profile.py /tmp/fast.json [--top N]

Prints the action time by kind (compiling, linking, testing, other), the compiles by
folder (our libraries, our tests, generated code), the slowest compiles and tests, and
the critical path Bazel recorded. Times are each action's wall time: on a machine busy
with other work they grow together, so compare shares, or runs made alike.
"""
import argparse
import collections
import json


def actions(path):
    with open(path) as f:
        trace = json.load(f)
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    for event in events:
        # An action also has an "action resource lock" event, its time waiting for a
        # slot, which is not time spent working.
        if event.get("ph") == "X" and "dur" in event and event.get("cat") != "action resource lock":
            yield event.get("cat", ""), event.get("name", ""), event["dur"] / 1e6


def kind_of(name):
    for prefix, kind in (("Compiling", "compiling"), ("Linking", "linking"),
                         ("Testing", "testing")):
        if name.startswith(prefix):
            return kind
    return None


def folder_of(source):
    kind = "generated" if ".pb.cc" in source else "tests" if source.endswith("_test.cc") else "libraries"
    return "/".join(source.split("/")[:2]), kind


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("profile")
    parser.add_argument("--top", type=int, default=15)
    args = parser.parse_args()

    by_kind, count = collections.Counter(), collections.Counter()
    by_folder, in_folder = collections.Counter(), collections.Counter()
    compiles, tests, critical = [], [], []
    for category, name, seconds in actions(args.profile):
        if category == "critical path component":
            critical.append((seconds, name))
            continue
        kind = kind_of(name)
        if kind is None:
            continue
        by_kind[kind] += seconds
        count[kind] += 1
        if kind == "compiling":
            source = name.split()[1]
            by_folder[folder_of(source)] += seconds
            in_folder[folder_of(source)] += 1
            compiles.append((seconds, source))
        elif kind == "testing":
            tests.append((seconds, name.split()[1]))

    print("action time by kind (s, actions):")
    for kind, seconds in by_kind.most_common():
        print(f"  {kind:10} {seconds:8.0f} {count[kind]:5d}")
    print("compiling by folder (s, files):")
    for (folder, kind), seconds in by_folder.most_common(args.top):
        print(f"  {seconds:7.0f} {in_folder[(folder, kind)]:4d}  {folder} ({kind})")
    print("slowest compiles (s):")
    for seconds, source in sorted(compiles, reverse=True)[:args.top]:
        print(f"  {seconds:6.1f}  {source}")
    print("slowest tests (s):")
    for seconds, target in sorted(tests, reverse=True)[:args.top]:
        print(f"  {seconds:6.1f}  {target}")
    if critical:
        print(f"critical path: {sum(s for s, _ in critical):.0f} s in {len(critical)} actions; longest:")
        for seconds, name in sorted(critical, reverse=True)[:5]:
            print(f"  {seconds:6.1f}  {name}")


if __name__ == "__main__":
    main()
