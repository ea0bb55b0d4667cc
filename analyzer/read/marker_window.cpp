#include "read/marker_window.h"

#include <sstream>

#include "report/memprof_report.h"

namespace prof {

void MarkerWindow::set(const WindowSpec &spec) {
  spec_ = spec;
  state_ = spec.from.empty() ? State::Inside : State::Before;
}

void MarkerWindow::marker(const std::string &label) {
  if (state_ == State::Before && label == spec_.from) {
    state_ = State::Inside;
  } else if (state_ == State::Inside && !spec_.to.empty() && label == spec_.to) {
    state_ = State::After;
    earlier_ = {};
  }
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
           std::holds_alternative<ext::Sampling>(ev.ext);
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
    return "no marker '" + spec_.from + "': nothing of it is in the window";
  if (state_ == State::Inside && !spec_.to.empty())
    return "no marker '" + spec_.to + "'" +
           (spec_.from.empty() ? "" : " after '" + spec_.from + "'") +
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
  line << "WINDOW (pid " << pid
       << "): " << (from.empty() ? "from the start" : "from marker '" + from + "'") << " "
       << (to.empty() ? "to the end" : "to marker '" + to + "'");
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
