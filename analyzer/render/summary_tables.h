// The summary (report/summary.h's JSON) as the HTML page shows it: the text
// summary's tables, as tables: the totals (figure, value), memory by
// function, the stack lists (kStackLists) with their figure, calls, sizes,
// frees, lifetimes and stack, the mmap domain, the hottest functions and
// stacks, threads and streams; each sortable by any column with a click on
// its heading.
//
// Tables: <table class="pf-table" data-name=NAME> ("memory", "memory.leaks",
// "cpu.self", ...), a <th> per column. Every row is made by the table's one
// list of columns, a cell each (empty where a row has no such figure: a
// block never freed has no lifetime), so a cell is under its heading by
// construction. A cell holding a number is right-aligned and carries it
// exactly as data-v=NUMBER, which the sort uses; a stack is one cell of its
// frames, innermost first, separated by " < ".
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>

namespace prof {

void write_summary_tables(const nlohmann::json &summary, std::ostream &out);

// The script that sorts every pf-table of the page by the clicked column.
extern const char kSortTablesScript[];

}  // namespace prof
