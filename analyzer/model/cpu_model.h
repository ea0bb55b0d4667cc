// CpuModel: the samples of sysprof streams, aggregated by unique stack.
//
// Invariants: memory grows with unique stacks and threads, never with
// samples. A sample is named with the symbols known when it is read, as
// LuaJIT's parser does, into the profile's CallTree; a stack is its stream,
// VM state and call-tree node. A cache from raw stacks to stacks lives while
// no symbol or module record arrives. A weight record makes the next sample
// count that many times; a thread record assigns the samples that follow.
// A thread is known by its stream and tid; its name is its stream's
// (StreamContext::thread_name).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "model/call_tree.h"
#include "read/stream_context.h"

namespace prof {

class CpuModel {
 public:
  struct Stack {
    uint32_t file = 0;
    uint8_t vmstate = 0;
    uint32_t node = 0;  // in the CallTree the samples were read into
    double samples = 0;
  };
  struct Thread {
    uint32_t file = 0;
    uint64_t tid = 0;
    bool operator<(const Thread &o) const {
      return file != o.file ? file < o.file : tid < o.tid;
    }
  };

  // Reads every sample of a sysprof stream, naming stacks into `calls`;
  // with a `thread` (ThreadChoice), only the samples of the threads it
  // chooses: so named then (thread-name records), or of that tid.
  void read(StreamContext &ctx, CallTree &calls, const std::string &thread = "");

  const std::vector<Stack> &stacks() const { return stacks_; }
  double samples() const { return samples_; }
  const std::map<uint8_t, double> &by_vmstate() const { return by_vmstate_; }
  const std::map<Thread, double> &by_thread() const { return by_thread_; }
  // "perf task-clock, CALLGRAPH mode, every 1000 us", one per stream that said.
  const std::vector<std::string> &samplers() const { return samplers_; }

 private:
  void add_sampler(std::string text);
  void add(StreamContext &ctx, CallTree &calls, const SysprofSample &s, double weight,
           uint64_t tid);

  std::vector<Stack> stacks_;
  std::map<std::tuple<uint32_t, uint8_t, uint32_t>, uint32_t> by_node_;  // (file, vmstate, node)
  std::map<std::vector<uint64_t>, uint32_t> by_raw_;   // raw sample -> stack (one naming epoch)
  uint64_t raw_epoch_ = UINT64_MAX;
  std::vector<uint64_t> raw_;
  double samples_ = 0;
  std::map<uint8_t, double> by_vmstate_;
  std::map<Thread, double> by_thread_;
  std::vector<std::string> samplers_;  // each distinct setting once
};

}  // namespace prof
