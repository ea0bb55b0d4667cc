#include "ext.h"

#include <array>

#include "uleb128.h"

namespace prof {

const char *ext_kind_name(ExtKind kind) {
  static const char *const kNames[] = {
      "?",          "stack-host", "stack-guest", "module-load", "module-unload",
      "time-mark",  "sampling",   "marker",      "stats",       "map",
      "unmap",      "process",    "sampler",     "thread",      "weight",
      "unclean-end", "skip",  "vm-function", "vm-state",
      "heap-total", "object-type", "working-dir", "site",   "alloc-at",
      "free-of",    "free-at",    "realloc-of", "trace-sample", "thread-name",
      "event-thread", "attached"};
  static_assert(sizeof kNames / sizeof kNames[0] == kExtKindMax + 1, "a name per kind");
  const uint8_t k = static_cast<uint8_t>(kind);
  return k <= kExtKindMax ? kNames[k] : "?";
}

const char *object_type_name(uint64_t type) {
  static const char *const kNames[] = {"?",        "string",   "table",  "function", "cfunction",
                                       "userdata", "thread",   "proto",  "upvalue",  "other"};
  static_assert(sizeof kNames / sizeof kNames[0] == kMaxObjectType + 1, "a name per type-id");
  return type <= kMaxObjectType ? kNames[type] : "?";
}

namespace {

// The bodies, as the grammar in ext.h lists them.
void read_body(ByteReader &in, ext::StackHost &r) {
  r.id = in.uleb();
  r.parent = in.uleb();
  r.ip = in.uleb();
}

void read_body(ByteReader &in, ext::StackGuest &r) {
  r.id = in.uleb();
  r.parent = in.uleb();
  r.frame_type = in.uleb();
  r.frame_addr = in.uleb();
  r.line = in.uleb();
}

void read_body(ByteReader &in, ext::ModuleLoad &r) {
  r.base = in.uleb();
  r.size = in.uleb();
  in.string(r.path, kMaxExtString);
  in.string(r.build_id, kMaxExtString);
}

void read_body(ByteReader &in, ext::ModuleUnload &r) { r.base = in.uleb(); }

void read_body(ByteReader &in, ext::TimeMark &r) {
  r.time_ns = in.uleb();
  r.rss_bytes = in.uleb();
  r.heap_bytes = in.uleb();
}

void read_body(ByteReader &in, ext::Sampling &r) { r.mean_bytes = in.uleb(); }

void read_body(ByteReader &in, ext::Marker &r) {
  r.time_ns = in.uleb();
  in.string(r.label, kMaxExtString);
}

void read_body(ByteReader &in, ext::Stats &r) {
  const uint64_t count_at = in.offset();
  const uint64_t n = in.uleb();
  if (n > kMaxExtStats) in.fail(count_at, "stats record claims " + std::to_string(n) + " counters");
  // XXX: grown counter by counter, with the bytes actually present.
  for (uint64_t i = 0; i < n; i++) {
    ext::Stat c;
    in.string(c.name, kMaxExtString);
    c.value = in.uleb();
    r.counters.push_back(std::move(c));
  }
}

void read_body(ByteReader &in, ext::Map &r) {
  r.addr = in.uleb();
  r.length = in.uleb();
  r.host_stack = in.uleb();
  r.guest_stack = in.uleb();
}

void read_body(ByteReader &in, ext::Unmap &r) {
  r.addr = in.uleb();
  r.length = in.uleb();
}

void read_body(ByteReader &in, ext::Process &r) {
  r.pid = in.uleb();
  r.ppid = in.uleb();
  r.time_unix_ns = in.uleb();
  in.string(r.exe_path, kMaxExtString);
}

void read_body(ByteReader &in, ext::Sampler &r) {
  r.backend = in.uleb();
  r.mode = in.uleb();
  r.interval_ns = in.uleb();
}

void read_body(ByteReader &in, ext::Thread &r) { r.tid = in.uleb(); }

void read_body(ByteReader &in, ext::Weight &r) { r.sample_weight = in.uleb(); }

void read_body(ByteReader &in, ext::UncleanEnd &r) {
  r.time_ns = in.uleb();
  r.lost_bytes = in.uleb();
}

void read_body(ByteReader &in, ext::Skip &r) {
  const uint64_t length_at = in.offset();
  r.length = in.uleb();
  if (r.length > kMaxExtString)
    in.fail(length_at, "skip record claims " + std::to_string(r.length) + " bytes");
  uint8_t passed[256];
  for (uint64_t left = r.length; left;) {
    const size_t n = left < sizeof passed ? size_t(left) : sizeof passed;
    in.bytes(passed, n);
    left -= n;
  }
}

void read_body(ByteReader &in, ext::VmFunction &r) {
  r.start = in.uleb();
  r.size = in.uleb();
  in.string(r.name, kMaxExtString);
}

void read_body(ByteReader &in, ext::VmState &r) { r.vmstate = in.uleb(); }

void read_body(ByteReader &in, ext::HeapTotal &r) {
  r.time_ns = in.uleb();
  r.live_bytes = in.uleb();
}

void read_body(ByteReader &in, ext::ObjectType &r) {
  const uint64_t type_at = in.offset();
  r.type = in.uleb();
  if (r.type == 0 || r.type > kMaxObjectType)
    in.fail(type_at, "object-type record with unknown type " + std::to_string(r.type));
}

void read_body(ByteReader &in, ext::WorkingDir &r) { in.string(r.path, kMaxExtString); }

void read_body(ByteReader &in, ext::Site &r) {
  r.id = in.uleb();
  const uint64_t head_at = in.offset();
  const uint8_t head = in.u8();
  const uint8_t source = head & kAsourceMask;
  if ((head & ~(kAsourceMask | kMemprofStacks)) || source > kAsourceTrace)
    in.fail(head_at, "bad site head " + hex_byte(head));
  read_guest_loc(in, source, r.loc);
  r.has_stacks = (head & kMemprofStacks) != 0;
  r.host_stack = r.has_stacks ? in.uleb() : 0;
  r.guest_stack = r.has_stacks ? in.uleb() : 0;
  r.size = in.uleb();
  const uint64_t type_at = in.offset();
  r.type = in.uleb();
  if (r.type > kMaxObjectType)
    in.fail(type_at, "site with unknown object type " + std::to_string(r.type));
}

void read_body(ByteReader &in, ext::AllocAt &r) { r.site = in.uleb(); }

void read_body(ByteReader &in, ext::FreeOf &r) {
  r.site = in.uleb();
  r.age_step = in.uleb();
}

void read_body(ByteReader &in, ext::FreeAt &r) {
  r.free_site = in.uleb();
  r.site = in.uleb();
  r.age_step = in.uleb();
}

void read_body(ByteReader &in, ext::ReallocOf &r) {
  r.site = in.uleb();
  r.age_step = in.uleb();
  r.new_site = in.uleb();
}

void read_body(ByteReader &in, ext::TraceSample &r) {
  r.traceno = in.uleb();
  r.addr = in.uleb();
  r.line = in.uleb();
}

// A thread-name's or event-thread's tid, refused at its offset unless
// Linux could give it.
uint64_t read_tid(ByteReader &in, const char *record) {
  const uint64_t at = in.offset();
  const uint64_t tid = in.uleb();
  if (tid == 0 || tid > kMaxTid)
    in.fail(at, std::string(record) + " of tid " + std::to_string(tid) + " (a thread id is 1 to " +
                    std::to_string(kMaxTid) + ")");
  return tid;
}

void read_body(ByteReader &in, ext::ThreadName &r) {
  r.tid = read_tid(in, "thread-name");
  const uint64_t at = in.offset();
  in.string(r.name, kMaxExtString);
  if (r.name.size() > kMaxThreadName)
    in.fail(at, "thread name of " + std::to_string(r.name.size()) + " bytes (at most " +
                    std::to_string(kMaxThreadName) + ")");
}

void read_body(ByteReader &in, ext::EventThread &r) { r.tid = read_tid(in, "event-thread"); }
void read_body(ByteReader &in, ext::Attached &r) { r.attach_number = in.uleb(); }

template <class Record>
void read_as(ByteReader &in, ExtRecord &out) {
  read_body(in, out.emplace<Record>());
}

using BodyReader = void (*)(ByteReader &, ExtRecord &);

// The readers by kind - 1, in ExtRecord's order (which ext.h checks).
template <size_t... I>
constexpr std::array<BodyReader, sizeof...(I)> body_readers(std::index_sequence<I...>) {
  return {read_as<std::variant_alternative_t<I, ExtRecord>>...};
}
constexpr auto kBodyReaders = body_readers(std::make_index_sequence<kExtKindMax>());

}  // namespace

SectionKind ext_kind_section(ExtKind kind) {
  switch (kind) {
    case ExtKind::Sampler:
    case ExtKind::Thread:
    case ExtKind::Weight:
    case ExtKind::VmState:
    case ExtKind::TraceSample:
      return SectionKind::Sysprof;
    case ExtKind::ObjectType:
    case ExtKind::Site:
    case ExtKind::AllocAt:
    case ExtKind::FreeOf:
    case ExtKind::FreeAt:
    case ExtKind::ReallocOf:
    case ExtKind::EventThread:
      return SectionKind::Memprof;
    default:
      return SectionKind::Symtab;
  }
}

void read_ext(ByteReader &in, uint8_t header, uint64_t at, SectionKind section, ExtRecord &out) {
  const uint8_t kind = header & kExtKindMask;
  if ((header & ~kExtKindMask) != kExtFlag || kind == 0 || kind > kExtKindMax)
    in.fail(at, "unknown extension record " + hex_byte(header));
  const SectionKind only = ext_kind_section(ExtKind(kind));
  if (only != SectionKind::Symtab && only != section)
    in.fail(at, std::string(ext_kind_name(ExtKind(kind))) + " record in a " +
                    (section == SectionKind::Memprof ? "memprof" : "sysprof") + " stream");
  kBodyReaders[kind - 1](in, out);
}

}  // namespace prof
