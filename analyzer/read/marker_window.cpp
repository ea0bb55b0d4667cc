#include "read/marker_window.h"

#include <cmath>
#include <cstdlib>
#include <sstream>

#include "report/memprof_report.h"

namespace prof {

uint64_t window_time_ns(const std::string &text) {
  if (text.size() < 2 || text.back() != 's') return UINT64_MAX;
  const std::string number = text.substr(0, text.size() - 1);
  if (number.find_first_not_of("0123456789.") != std::string::npos || number[0] == '.') return UINT64_MAX;
  char *end = nullptr;
  const double seconds = strtod(number.c_str(), &end);
  if (*end || !(seconds >= 0) || seconds > 1e9) return UINT64_MAX;
  return uint64_t(std::llround(seconds * 1e9));
}

void MarkerWindow::set(const WindowSpec &spec) {
  spec_ = spec;
  from_ns_ = window_time_ns(spec.from);
  to_ns_ = window_time_ns(spec.to);
  state_ = spec.from.empty() ? State::Inside : State::Before;
}

void MarkerWindow::close() {
  state_ = State::After;
  earlier_ = {};
}

void MarkerWindow::marker(const std::string &label) {
  if (state_ == State::Before && from_ns_ == UINT64_MAX && label == spec_.from) {
    state_ = State::Inside;
  } else if (state_ == State::Inside && !spec_.to.empty() && to_ns_ == UINT64_MAX &&
             label == spec_.to) {
    close();
  }
}

void MarkerWindow::time(uint64_t ns) {
  if (state_ == State::Before && from_ns_ != UINT64_MAX && ns >= from_ns_) state_ = State::Inside;
  if (state_ == State::Inside && to_ns_ != UINT64_MAX && ns >= to_ns_) close();
}

bool MarkerWindow::take_earlier(uint64_t addr, uint64_t *size) {
  auto it = earlier_.find(addr);
  if (it == earlier_.end()) return false;
  *size = it->second.second;
  if (--it->second.first == 0) earlier_.erase(it);
  return true;
}

bool MarkerWindow::pass_rest(MemprofEvent &ev) {
  if (ev.record == MemprofRecord::Ext)
    return (state_ == State::Inside &&
            !(spec_.active() && std::holds_alternative<ext::HeapTotal>(ev.ext))) ||
           std::holds_alternative<ext::Sampling>(ev.ext) ||
           std::holds_alternative<ext::EventThread>(ev.ext);
  if (state_ == State::Inside && earlier_.empty()) return true;
  uint64_t size;
  if (state_ == State::Before) {
    if (ev.record != MemprofRecord::Alloc) take_earlier(ev.oaddr, &size);
    if (ev.record != MemprofRecord::Free) {
      auto &b = earlier_[ev.naddr];
      b.first++;
      b.second = ev.nsize;
    }
    return false;
  }
  if (state_ == State::After) return false;
  if (ev.record == MemprofRecord::Alloc) return true;
  if (!take_earlier(ev.oaddr, &size)) return true;
  earlier_frees_++;
  earlier_bytes_ += size;
  if (ev.record == MemprofRecord::Free) return false;
  ev.oaddr = 0;  // the realloc makes a block of the window from one made before
  return true;
}

bool MarkerWindow::pass(const SysprofSample &s) {
  if (state_ == State::Inside) return true;
  return s.record == SysprofRecord::Ext && (std::holds_alternative<ext::Thread>(s.ext) ||
                                            std::holds_alternative<ext::Sampler>(s.ext));
}

std::string MarkerWindow::warning() const {
  if (state_ == State::Before)
    return from_ns_ != UINT64_MAX ? "the stream ends before " + spec_.from + ": nothing of it is in the window"
                                  : "no marker '" + spec_.from + "': nothing of it is in the window";
  if (state_ == State::Inside && !spec_.to.empty())
    return (to_ns_ != UINT64_MAX ? "the stream ends before " + spec_.to
                                 : "no marker '" + spec_.to + "'" +
                                       (spec_.from.empty() ? "" : " after '" + spec_.from + "'")) +
           ": the window runs to the end of the stream";
  return "";
}

nlohmann::json MarkerWindow::to_json() const {
  return {{"from", spec_.from},
          {"to", spec_.to},
          {"opened", opened()},
          {"closed", closed()},
          {"earlier_frees", earlier_frees_},
          {"earlier_freed_bytes", earlier_bytes_}};
}

std::string window_line(const nlohmann::json &w, uint64_t pid) {
  std::ostringstream line;
  const std::string from = w["from"], to = w["to"];
  auto bound = [](const std::string &b) {
    return window_time_ns(b) != UINT64_MAX ? b : "marker '" + b + "'";
  };
  line << "WINDOW (pid " << pid
       << "): " << (from.empty() ? "from the start" : "from " + bound(from)) << " "
       << (to.empty() ? "to the end" : "to " + bound(to));
  if (!w["opened"].get<bool>())
    line << ": the first marker never came, nothing reported";
  else if (!to.empty() && !w["closed"].get<bool>())
    line << " (never came: to the end)";
  if (w["earlier_frees"].get<uint64_t>())
    line << "; " << w["earlier_frees"].get<uint64_t>() << " frees of blocks made before it ("
         << format_bytes(double(w["earlier_freed_bytes"].get<uint64_t>()), true) << ") left out";
  return line.str();
}

}  // namespace prof
