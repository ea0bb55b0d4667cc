// Text for SVG and HTML documents written by the analyzer.
//
// Invariants: escape_markup() output is safe inside element text and inside
// double- or single-quoted attribute values, in XML and in HTML.
#pragma once

#include <string>

namespace prof {

// `text` with &, <, >, " and ' written as character references; control
// characters XML 1.0 forbids and bytes that are not UTF-8 as U+FFFD.
std::string escape_markup(const std::string &text);

// A figure with thousands separators: 1234567.4 -> "1,234,567".
std::string grouped(double value);

}  // namespace prof
