// The summary (report/summary.h's JSON) as HTML tables for the report page:
// per section ("memory", "cpu", ...) a table of its figures, then a table per
// list of rows (the stacks by allocation, leaks, ...), each sortable by any
// column with a click on its heading.
//
// Tables: <table class="pf-table" data-name=SECTION.LIST> with a <th> per
// column; objects inside a row are columns "KEY.FIELD", a stack is one column
// of its frames, innermost first, separated by " < ". A cell holding a number
// carries it exactly as data-v=NUMBER, which the sort uses.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>

namespace prof {

void write_summary_tables(const nlohmann::json &summary, std::ostream &out);

// The script that sorts every pf-table of the page by the clicked column.
extern const char kSortTablesScript[];

}  // namespace prof
