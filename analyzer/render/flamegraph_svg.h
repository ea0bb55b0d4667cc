// An interactive flame graph of folded stacks as one self-contained SVG
// document: no fonts, scripts or styles from outside it.
//
// The document carries the merged tree as data and its script draws only
// what is visible, so it opens as fast for a million stacks as for ten, and
// every frame is reachable by zooming (nothing is left out when written):
//   <script type="application/json" class="pf-data"><![CDATA[{
//     "unit": UNIT, "memory": BOOL, "icicle": BOOL, "total": COUNT,
//     "names": ["NAME" or "NAME\tFILE:LINE"...],
//     "name": [N...], "depth": [D...], "value": [COUNT...],
//     "inlined": [NODE...]}]]></script>
// Nodes are in depth-first order, children in name order: node 0 is the
// root ("all", depth 0); a node's children follow it, each with its stacks,
// at depth + 1. N is 0 for the next name of `names` (numbered in the order
// they first appear), else 1 + the index of the name. FILE:LINE (the file's
// basename) is where a frame of the function was seen. COUNT is the node's
// count with the stacks through it, counts rounded to integers and nodes
// below 1 left out. `inlined` lists the nodes with an inlined frame.
//
// The script draws the frames at least "min width" px wide (1 by default)
// across the window's width, children above their parent (below with
// `icicle`): each a <g class="f" data-i=NODE> with a <rect> and, when the
// name fits, a <text>. A click zooms; a search box (Ctrl-F) highlights
// matches (case-insensitive regular expression) with their share; a box
// turns the graph into callers (inverted); hovering shows the function,
// file:line, [inlined] and the count in its unit. A graph further down a
// page than a window's height is set up when it comes near (data-ready =
// "deferred" until then). Once set up it sets data-ready (the nodes) and
// data-drawn (the frames drawn) on the <svg>. The <svg> exposes svg.profFlame = {zoom(name) -> bool, search(text) -> matched
// count, reset(), invert(bool), minWidth(px), frame(name) -> {x, y, width,
// depth} of its drawn frame or null} for pages and tests.
#pragma once

#include <ostream>
#include <string>

#include "report/folded.h"

namespace prof {

struct FlameGraphOptions {
  std::string title = "Flame Graph";
  std::string unit = "samples";  // what a count is: samples, bytes, allocations
  bool icicle = false;           // root at the top, stacks growing down
  bool memory = false;           // the memory palette (greens) instead of CPU's (reds)
  std::string id = "flame";      // the <svg>'s id, unique within a page
  bool standalone = true;        // a file of its own (XML declaration), else inline in HTML
};

// Draws folded stacks (counts rounded to integers, those below 1 left out,
// as render_folded() does).
void render_flamegraph_svg(const FoldedStacks &stacks, const FlameGraphOptions &opt,
                           std::ostream &out);

}  // namespace prof
