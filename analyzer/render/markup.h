// Text for SVG and HTML documents written by the analyzer.
//
// Invariants: escape_markup() output is safe inside element text and inside
// double- or single-quoted attribute values, in XML and in HTML;
// json_string() output inside a script element of either.
#pragma once

#include <string>

namespace prof {

// `text` with &, <, >, " and ' written as character references; control
// characters XML 1.0 forbids and bytes that are not UTF-8 as U+FFFD.
std::string escape_markup(const std::string &text);

// `text` as a JSON string literal safe inside <script> and CDATA: <, > and
// & as \u escapes, invalid UTF-8 as U+FFFD.
std::string json_string(const std::string &text);

// A figure with thousands separators: 1234567.4 -> "1,234,567".
std::string grouped(double value);

}  // namespace prof
