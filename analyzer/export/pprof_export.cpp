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

std::string hex_bytes(const std::string &raw) {
  static const char kDigits[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : raw) {
    out += kDigits[c >> 4];
    out += kDigits[c & 15];
  }
  return out;
}

std::string gzip(const std::string &data) {
  z_stream z{};
  // XXX: windowBits 15 + 16 asks zlib for a gzip header and trailer.
  if (deflateInit2(&z, Z_BEST_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    throw std::runtime_error("zlib: cannot start compressing");
  std::string out(deflateBound(&z, uLong(data.size())), '\0');
  z.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(data.data()));
  z.avail_in = uInt(data.size());
  z.next_out = reinterpret_cast<Bytef *>(&out[0]);
  z.avail_out = uInt(out.size());
  const int rc = deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  if (rc != Z_STREAM_END) throw std::runtime_error("zlib: cannot compress the profile");
  return out;
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

  // The locations of frames (root first), leaf first.
  std::vector<uint64_t> locations(const std::vector<Frame> &frames) {
    std::vector<uint64_t> ids;
    for (size_t i = 0; i < frames.size();) {
      size_t end = i + 1;
      while (end < frames.size() && frames[end].kind == Frame::Kind::Inlined &&
             frames[end].addr == frames[i].addr)
        end++;
      ids.push_back(location(frames, i, end));
      i = end;
    }
    return {ids.rbegin(), ids.rend()};
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
  // The location of frames[begin, end): a host frame and the functions
  // inlined at its address.
  uint64_t location(const std::vector<Frame> &frames, size_t begin, size_t end) {
    const Frame &outer = frames[begin];
    const bool addressed = outer.addr != 0 && outer.kind != Frame::Kind::Guest;
    std::string key = addressed
                          ? outer.module + '\n' + std::to_string(outer.addr)
                          : "\n" + outer.function + '\n' + outer.file + '\n' +
                                std::to_string(outer.line) + '\n' + std::to_string(int(outer.kind));
    auto it = location_ids_.find(key);
    if (it != location_ids_.end()) return it->second;
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
      pb::Line *line = loc->add_line();
      line->set_function_id(function(frames[i]));
      line->set_line(frames[i].line);
    }
    return location_ids_[key] = loc->id();
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
};

}  // namespace

std::string pprof_profile(const std::vector<Profile *> &profiles, bool label_pid) {
  PprofBuilder b;
  for (Profile *profile : profiles) {
    b.add_mappings(*profile);
    const StackValues values = stack_values(*profile);
    b.set_types(values.types, profile->has_memory() ? "alloc_space" : "samples");
    const uint64_t pid = profile->streams().empty() ? 0 : profile->streams()[0]->pid;
    for (const ValuedStack &s : values.stacks) {
      pb::Sample *sample = b.profile().add_sample();
      for (uint64_t id : b.locations(s.frames)) sample->add_location_id(id);
      for (double v : s.values) sample->add_value(std::llround(v));
      if (!s.vmstate.empty()) {
        pb::Label *l = sample->add_label();
        l->set_key(b.str("vmstate"));
        l->set_str(b.str(s.vmstate));
      }
      if (label_pid) {
        pb::Label *l = sample->add_label();
        l->set_key(b.str("pid"));
        l->set_num(int64_t(pid));
      }
    }
  }
  std::string bytes;
  if (!b.profile().SerializeToString(&bytes)) throw std::runtime_error("cannot encode the profile");
  return gzip(bytes);
}

}  // namespace prof
