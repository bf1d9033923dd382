#!/usr/bin/env python3
"""Writes the large RPGs that show the rpg target's slow inputs (too big for libFuzzer's
length limit, so found by reading the code and measured here; see reports/fuzz.md).

  deep-parent-chain-N.json  composites each the parent of the next: schedule::plan::build
                            walks every parent chain with a linear id lookup per step, O(N^3).
  dependency-chain-N.json   composites in a dependency chain: rpg::graph::DepGraph::build
                            checks path containment for every composite x node pair, O(N^2).

usage: make_large.py deep-parent-chain|dependency-chain N > file.json
"""

import json
import sys

kind, n = sys.argv[1], int(sys.argv[2])
nodes = []
for i in range(n):
    node = {"id": f"n{i}", "name": "n", "type": "module", "node_type": "composite"}
    if i and kind == "deep-parent-chain":
        node["parent"] = f"n{i - 1}"
    elif i and kind == "dependency-chain":
        node["dependencies"] = [f"n{i - 1}"]
    nodes.append(node)
json.dump({"nodes": nodes}, sys.stdout, separators=(",", ":"))
