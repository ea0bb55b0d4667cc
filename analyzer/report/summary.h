// The native summary of a Profile, as one JSON document (the data model of
// `prof-analyze summary --json`, schema in docs/analyzer.md) and as text rendered
// from that document, so both always say the same.
//
// Invariants: every table is limited to `top` rows and sorted by its figure,
// equal figures in a fixed order (the stacks' frames when streams merge,
// else the order stacks were met in). Streams read together merge stacks
// whose frames are alike.
#pragma once

#include <cstddef>
#include <ostream>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/profile.h"

namespace prof {

struct SummaryOptions {
  size_t top = 10;          // rows per table
  size_t stack_depth = 12;  // frames per stack in text (0: all)
  bool lines = false;       // the tables by function by line instead
  // Text: every table; else one screen (totals, peak, leaks, temporaries,
  // hottest functions) and a line naming what --full adds.
  bool full = false;
};

// The memory lists of stacks, in the order the text and the HTML page show
// them: the list's key in the summary's "memory", its title, the figure it
// is sorted by, that figure's unit ("" for bytes), and whether one screen
// shows it.
struct StackList {
  const char *key, *title, *figure, *unit;
  bool on_one_screen;
};
extern const StackList kStackLists[5];

nlohmann::json summary_json(Profile &profile, const SummaryOptions &opt);
void render_summary(const nlohmann::json &summary, const SummaryOptions &opt, std::ostream &out);

// A frame as JSON: {"function", "file", "line", "module", "kind"}.
nlohmann::json frame_json(const Frame &f);
// A stack (frames root first) as JSON frames, innermost first as a backtrace.
nlohmann::json stack_json(const std::vector<Frame> &root_first);
// The text of such JSON frames, indented, at most `depth` (0: all) lines of
// them, a frame repeated N times in a row one line "frame ×N", frames of a
// module's stripped code in a row one line "module: N functions without
// symbols (0x...)", or, without show_stripped, left out (one screen's
// summary: the named frames only).
void render_stack(const nlohmann::json &frames, size_t depth, std::ostream &out,
                  bool show_stripped = true);
// For each row of a stack table ({"stack": frames, ...}), whether its
// stack, rendered to `depth` without stripped code, reads as another row's.
std::vector<bool> rows_alike_without_stripped_code(const nlohmann::json &rows, size_t depth);

}  // namespace prof
