// An interactive flame graph of folded stacks as one self-contained SVG
// document: no fonts, scripts or styles from outside it.
//
// Picture: one rectangle per frame, its width proportional to the frame's
// count, children above their parent (below it with `icicle`) in name order;
// frames narrower than 0.1 px are left out, as are their children. Each
// frame is
//   <g class="f" data-s=START data-v=COUNT data-d=DEPTH>
//     <title>NAME (COUNT UNIT, PCT%)</title><rect .../><text ...>LABEL</text></g>
// with COUNT grouped by thousands, START the sum of the counts left of it
// and DEPTH 0 for the root frame "all". The embedded script zooms on a click
// (Reset Zoom undoes it), searches by regular expression (Search) and shows
// the hovered frame's title at the bottom; once set up it sets data-ready on
// the <svg> (the frames it handles) and exposes svg.profFlame = {zoom(name),
// search(regex) -> matched count, reset()} for pages and tests.
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
