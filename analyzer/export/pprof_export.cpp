#include "export/pprof_export.h"

#include <zlib.h>

#include <cmath>
#include <map>
#include <stdexcept>
#include <tuple>

#include "pprof.pb.h"
#include "model/stack_values.h"

namespace prof {
namespace {

namespace pb = perftools::profiles;

// A gzip stream to `out`, written as it is fed.
class GzipWriter {
 public:
  explicit GzipWriter(std::ostream &out) : out_(out) {
    // XXX: windowBits 15 + 16 asks zlib for a gzip header and trailer; the
    // default level, as Go's own pprof writer uses.
    if (deflateInit2(&z_, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) !=
        Z_OK)
      throw std::runtime_error("zlib: cannot start compressing");
  }
  ~GzipWriter() { deflateEnd(&z_); }
  GzipWriter(const GzipWriter &) = delete;
  GzipWriter &operator=(const GzipWriter &) = delete;

  void write(const std::string &data) { deflate_all(data, Z_NO_FLUSH); }
  void finish() { deflate_all("", Z_FINISH); }

 private:
  void deflate_all(const std::string &data, int flush) {
    z_.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(data.data()));
    z_.avail_in = uInt(data.size());
    int rc;
    do {
      z_.next_out = chunk_;
      z_.avail_out = sizeof chunk_;
      rc = deflate(&z_, flush);
      if (rc == Z_STREAM_ERROR) throw std::runtime_error("zlib: cannot compress the profile");
      out_.write(reinterpret_cast<const char *>(chunk_), std::streamsize(sizeof chunk_ - z_.avail_out));
    } while (z_.avail_out == 0 || (flush == Z_FINISH && rc != Z_STREAM_END));
  }

  std::ostream &out_;
  z_stream z_{};
  Bytef chunk_[1 << 16];
};

// A field of the Profile message (its number and wire type 2: bytes), as
// protobuf encodes it.
std::string field_bytes(uint32_t number, const std::string &bytes) {
  std::string out;
  for (uint64_t v : {uint64_t(number) << 3 | 2, uint64_t(bytes.size())}) {
    for (; v >= 0x80; v >>= 7) out += char(v | 0x80);
    out += char(v);
  }
  return out + bytes;
}

// A value rounded to an int64, the largest (smallest) one beyond them.
int64_t saturated(double v) {
  constexpr double kTwo63 = 9223372036854775808.0;
  const double n = std::round(v);
  return n >= kTwo63 ? INT64_MAX : n < -kTwo63 ? INT64_MIN : int64_t(n);
}

// Builds the profile's tables, each entry once.
class PprofBuilder {
 public:
  PprofBuilder() { str(""); }

  int64_t str(const std::string &s) {
    auto it = strings_.find(s);
    if (it != strings_.end()) return it->second;
    const int64_t index = p_.string_table_size();
    p_.add_string_table(s);
    return strings_[s] = index;
  }

  void add_mappings(const Profile &profile) {
    for (const auto &ctx : profile.streams())
      for (const Symbolizer::ModuleInfo &m : ctx->symbolizer.modules()) {
        const auto key = std::make_tuple(m.path, m.base, m.size, m.build_id);
        if (mapping_ids_.count(key)) continue;
        pb::Mapping *pm = p_.add_mapping();
        pm->set_id(uint64_t(p_.mapping_size()));
        pm->set_memory_start(m.base);
        pm->set_memory_limit(m.base + m.size);
        pm->set_filename(str(m.path));
        pm->set_build_id(str(hex_bytes(m.build_id)));
        pm->set_has_functions(true);
        pm->set_has_filenames(true);
        pm->set_has_line_numbers(true);
        pm->set_has_inline_frames(true);
        mapping_ids_[key] = pm->id();
        by_path_[m.path].push_back(pm);
      }
  }

  // Starts the stacks of a profile's call tree.
  void begin(const CallTree &calls) {
    calls_ = &calls;
    frame_locations_.clear();
  }
  // The locations of a call-tree node's stack into `sample`, leaf first.
  void add_locations(uint32_t node, pb::Sample &sample) {
    calls_->path(node, path_);
    runs_.clear();
    for (size_t i = 0; i < path_.size();) {
      size_t end = i + 1;
      while (end < path_.size() && calls_->kind(path_[end]) == Frame::Kind::Inlined &&
             calls_->addr(path_[end]) == calls_->addr(path_[i]))
        end++;
      runs_.push_back(location(i, end));
      i = end;
    }
    for (size_t i = runs_.size(); i-- > 0;) sample.add_location_id(runs_[i]);
  }

  void set_types(const std::vector<ValueType> &types, const std::string &preferred) {
    if (p_.sample_type_size()) return;
    for (const ValueType &t : types) {
      pb::ValueType *v = p_.add_sample_type();
      v->set_type(str(t.type));
      v->set_unit(str(t.unit));
    }
    p_.set_default_sample_type(str(preferred));
  }

  pb::Profile &profile() { return p_; }

 private:
  // The location of path_[begin, end): a host frame and the functions
  // inlined at its address; the first stack through a frame sets them.
  uint64_t location(size_t begin, size_t end) {
    const uint32_t outer_id = path_[begin];
    if (frame_locations_.size() <= outer_id) frame_locations_.resize(calls_->frame_count(), 0);
    if (frame_locations_[outer_id]) return frame_locations_[outer_id];
    const Frame outer = calls_->frame(outer_id);
    const bool addressed = outer.addr != 0 && outer.kind != Frame::Kind::Guest;
    std::string key = addressed
                          ? outer.module + '\n' + std::to_string(outer.addr)
                          : "\n" + outer.function + '\n' + outer.file + '\n' +
                                std::to_string(outer.line) + '\n' + std::to_string(int(outer.kind));
    auto it = location_ids_.find(key);
    if (it != location_ids_.end()) return frame_locations_[outer_id] = it->second;
    pb::Location *loc = p_.add_location();
    loc->set_id(uint64_t(p_.location_size()));
    if (addressed) {
      loc->set_address(outer.addr);
      for (const pb::Mapping *m : by_path_[outer.module])
        if (outer.addr >= m->memory_start() && outer.addr < m->memory_limit()) {
          loc->set_mapping_id(m->id());
          break;
        }
    }
    for (size_t i = end; i-- > begin;) {
      const Frame f = calls_->frame(path_[i]);
      pb::Line *line = loc->add_line();
      line->set_function_id(function(f));
      line->set_line(f.line);
    }
    return frame_locations_[outer_id] = location_ids_[key] = loc->id();
  }

  uint64_t function(const Frame &f) {
    const auto key = std::make_pair(f.function, f.file);
    auto it = function_ids_.find(key);
    if (it != function_ids_.end()) return it->second;
    pb::Function *fn = p_.add_function();
    fn->set_id(uint64_t(p_.function_size()));
    fn->set_name(str(f.function));
    fn->set_system_name(str(f.function));
    fn->set_filename(str(f.file));
    return function_ids_[key] = fn->id();
  }

  pb::Profile p_;
  std::map<std::string, int64_t> strings_;
  std::map<std::tuple<std::string, uint64_t, uint64_t, std::string>, uint64_t> mapping_ids_;
  std::map<std::string, std::vector<const pb::Mapping *>> by_path_;
  std::map<std::string, uint64_t> location_ids_;
  std::map<std::pair<std::string, std::string>, uint64_t> function_ids_;
  // The profile being added: its location by outer frame id (0: none yet).
  const CallTree *calls_ = nullptr;
  std::vector<uint64_t> frame_locations_;
  std::vector<uint32_t> path_;
  std::vector<uint64_t> runs_;
};

}  // namespace

void write_pprof(const std::vector<Profile *> &profiles, bool label_pid, std::ostream &out) {
  PprofBuilder b;
  GzipWriter gz(out);
  constexpr uint32_t kSampleField = 2;  // Profile.sample, pprof.proto
  pb::Sample sample;
  std::string bytes;
  for (Profile *profile : profiles) {
    b.add_mappings(*profile);
    const StackValues values = stack_values(*profile);
    b.set_types(values.types, profile->has_memory() ? "alloc_space" : "samples");
    b.begin(profile->calls());
    const uint64_t pid = profile->streams().empty() ? 0 : profile->streams()[0]->pid;
    for (size_t i = 0; i < values.nodes.size(); i++) {
      sample.Clear();
      b.add_locations(values.nodes[i], sample);
      for (size_t t = 0; t < values.types.size(); t++)
        sample.add_value(saturated(values.values_of(i)[t]));
      if (!values.vmstates.empty()) {
        pb::Label *l = sample.add_label();
        l->set_key(b.str("vmstate"));
        l->set_str(b.str(vmstate_name(values.vmstates[i])));
      }
      if (label_pid) {
        pb::Label *l = sample.add_label();
        l->set_key(b.str("pid"));
        l->set_num(int64_t(pid));
      }
      if (!sample.SerializeToString(&bytes)) throw std::runtime_error("cannot encode the profile");
      gz.write(field_bytes(kSampleField, bytes));
    }
  }
  if (!b.profile().SerializeToString(&bytes)) throw std::runtime_error("cannot encode the profile");
  gz.write(bytes);
  gz.finish();
}

}  // namespace prof
