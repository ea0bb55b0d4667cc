#include "render/markup.h"

#include <cmath>
#include <cstdio>

#include "report/memprof_report.h"

namespace prof {

namespace {

// The length of the valid UTF-8 sequence at s[i], or 0.
size_t utf8_length(const std::string &s, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char b = byte(i);
  const size_t n = b < 0x80 ? 1 : (b >> 5) == 6 ? 2 : (b >> 4) == 14 ? 3 : (b >> 3) == 30 ? 4 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (size_t k = 1; k < n; k++)
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
  return n;
}

}  // namespace

std::string escape_markup(const std::string &text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const size_t n = utf8_length(text, i);
    if (n != 1) {
      // XXX: names come from streams; an invalid byte makes the document unreadable.
      out += n ? text.substr(i, n) : "\xEF\xBF\xBD";
      i += n ? n : 1;
      continue;
    }
    const char c = text[i++];
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n' && c != '\r')
          out += "\xEF\xBF\xBD";
        else
          out += c;
    }
  }
  return out;
}

std::string json_string(const std::string &text) {
  std::string out = "\"";
  for (size_t i = 0; i < text.size();) {
    const size_t n = utf8_length(text, i);
    if (n != 1) {
      out += n ? text.substr(i, n) : "\\ufffd";
      i += n ? n : 1;
      continue;
    }
    const unsigned char c = static_cast<unsigned char>(text[i++]);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += char(c);
    } else if (c < 0x20 || c == '<' || c == '>' || c == '&' || c == 0x7f) {
      char buf[8];
      snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += char(c);
    }
  }
  return out + "\"";
}

std::string grouped(double value) {
  std::string digits = format_count(value), out;
  const bool negative = digits[0] == '-';
  if (negative) digits.erase(0, 1);
  for (size_t i = 0; i < digits.size(); i++) {
    if (i && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return negative ? "-" + out : out;
}

}  // namespace prof
