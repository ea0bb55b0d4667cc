// Memory by thread, end to end: mem_named_threads (test/e2e) names its
// threads and makes allocations known by construction; the agent's memory
// stream says which thread made each event (event-thread records), and
// prof-analyze splits the memory by thread and filters it with --thread,
// whether the events were compacted, written plain, or written by the
// program's own threads (no writer thread under a low task limit).
#include <catch2/catch.hpp>

#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "agent_run.h"
#include "temp_files.h"

namespace {

using Json = nlohmann::json;

Json summary(const std::string &file, const std::vector<std::string> &options = {}) {
  std::vector<std::string> argv = {PROF_ANALYZER_PATH, "summary", "--json"};
  argv.insert(argv.end(), options.begin(), options.end());
  argv.push_back(file);
  const RunResult r = run_bare(argv);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  return Json::parse(r.out);
}

// The memory split's lines by thread name.
std::map<std::string, Json> threads_by_name(const Json &s) {
  std::map<std::string, Json> by_name;
  for (const Json &t : s["memory"]["threads"]) by_name[t["name"]] = t;
  return by_name;
}

struct Figures {
  double bytes, calls, frees, leaked_bytes, leaked_blocks, peak;
};

void check_thread(const std::map<std::string, Json> &by_name, const std::string &name,
                  const Figures &f) {
  INFO(name);
  REQUIRE(by_name.count(name) == 1);
  const Json &t = by_name.at(name);
  CHECK(t["alloc_bytes"].get<double>() == f.bytes);
  CHECK(t["alloc_count"].get<double>() == f.calls);
  CHECK(t["free_count"].get<double>() == f.frees);
  CHECK(t["leaked_bytes"].get<double>() == f.leaked_bytes);
  CHECK(t["leaked_blocks"].get<double>() == f.leaked_blocks);
  CHECK(t["peak_bytes"].get<double>() == f.peak);
}

// The totals of a summary --thread: exactly that thread's blocks, their
// frees (whoever made them), no unknown frees.
void check_chosen(const Json &s, double bytes, double calls, double frees, double leaked_bytes,
                  double leaked_blocks) {
  const Json &m = s["memory"];
  CHECK(m["allocated_bytes"].get<double>() == bytes);
  CHECK(m["alloc_calls"].get<double>() == calls);
  CHECK(m["realloc_calls"].get<double>() == 0);
  CHECK(m["free_calls"].get<double>() == frees);
  CHECK(m["unknown_frees"].get<double>() == 0);
  CHECK(m["leaked_bytes"].get<double>() == leaked_bytes);
  CHECK(m["leaked_blocks"].get<double>() == leaked_blocks);
}

// What mem_named_threads made, thread by thread, read from `file`.
void check_named_threads(const std::string &file) {
  const Json all = summary(file);
  const std::map<std::string, Json> by_name = threads_by_name(all);
  // alpha: 100 x 1000 B, 60 freed by beta; beta: 50 x 3000 B, 80 frees (60
  // of alpha's); the renamed thread, one line under its last name: 10 x 500
  // B and 7 x 700 B. At the peak (beta's 50th block) alpha held 100000 B,
  // beta 150000 B.
  check_thread(by_name, "alpha-worker", {100000, 100, 0, 40000, 40, 100000});
  check_thread(by_name, "beta-worker", {150000, 50, 80, 90000, 30, 150000});
  check_thread(by_name, "delta-worker", {9900, 17, 0, 9900, 17, 0});
  CHECK(by_name.count("gamma-worker") == 0);
  // The main thread is named as the kernel named it (15 bytes of the
  // program's name), at its first event.
  CHECK(by_name.count("mem_named_threa") == 1);

  // --thread NAME: the events the thread made while so named, and the
  // frees of its blocks; the blocks of others it freed are no unknown frees.
  const Json alpha = summary(file, {"--thread", "alpha-worker"});
  check_chosen(alpha, 100000, 100, 60, 40000, 40);
  CHECK(alpha["memory"]["peak_bytes"].get<double>() == 100000);
  REQUIRE(alpha["memory"]["threads"].size() == 1);
  CHECK(alpha["memory"]["threads"][0]["name"] == "alpha-worker");
  const Json beta = summary(file, {"--thread", "beta-worker"});
  check_chosen(beta, 150000, 50, 20, 90000, 30);
  CHECK(beta["memory"]["peak_bytes"].get<double>() == 150000);
  check_chosen(summary(file, {"--thread", "gamma-worker"}), 5000, 10, 0, 5000, 10);
  check_chosen(summary(file, {"--thread", "delta-worker"}), 4900, 7, 0, 4900, 7);
  check_chosen(summary(file, {"--thread", "no-such-thread"}), 0, 0, 0, 0, 0);
  // --thread TID, as the split gives it, is the same thread.
  const std::string tid = std::to_string(by_name.at("alpha-worker")["tid"].get<uint64_t>());
  for (const std::string &spec : {tid, "tid " + tid}) {
    INFO(spec);
    check_chosen(summary(file, {"--thread", spec}), 100000, 100, 60, 40000, 40);
  }

  // In text, one line per thread, the top three on one screen.
  const RunResult text = run_bare({PROF_ANALYZER_PATH, "summary", file});
  REQUIRE(text.exit_code == 0);
  CHECK(text.out.find("  by thread:") != std::string::npos);
  const size_t beta_line = text.out.find("beta-worker (pid ");
  const size_t alpha_line = text.out.find("alpha-worker (pid ");
  CHECK(beta_line != std::string::npos);
  CHECK(alpha_line != std::string::npos);
  CHECK(beta_line < alpha_line);  // by bytes allocated
  CHECK(text.out.find(" more threads\n") != std::string::npos);  // four threads
  const RunResult full = run_bare({PROF_ANALYZER_PATH, "summary", "--full", file});
  CHECK(full.out.find("delta-worker (pid ") != std::string::npos);
  CHECK(full.out.find(" more threads\n") == std::string::npos);

  // A suppression of alpha's leaks leaves them out of its thread's line
  // too; the other threads' stay.
  const TempDir dir("threads-supp");
  std::ofstream(dir / "supp") << "leak:alpha_main\n";
  const Json suppressed = summary(file, {"--suppressions", dir / "supp"});
  CHECK(suppressed["memory"]["leaked_bytes"].get<double>() ==
        all["memory"]["leaked_bytes"].get<double>() - 40000);
  const std::map<std::string, Json> kept = threads_by_name(suppressed);
  check_thread(kept, "alpha-worker", {100000, 100, 0, 0, 0, 100000});
  check_thread(kept, "beta-worker", {150000, 50, 80, 90000, 30, 150000});
  check_thread(kept, "delta-worker", {9900, 17, 0, 9900, 17, 0});

  // The HTML page has the same lines, a row per thread, the most bytes first.
  const std::string page = dir / "page.html";
  REQUIRE(run_bare({PROF_ANALYZER_PATH, "html", file, "-o", page}).exit_code == 0);
  std::ifstream in(page);
  const std::string html((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t table = html.find("data-name=\"memory.threads\"");
  REQUIRE(table != std::string::npos);
  const std::string rows = html.substr(table, html.find("</table>", table) - table);
  const size_t beta_at = rows.find("<td>beta-worker</td>"), alpha_at = rows.find("<td>alpha-worker</td>");
  REQUIRE(beta_at != std::string::npos);
  REQUIRE(alpha_at != std::string::npos);
  CHECK(beta_at < alpha_at);
  // alpha's row, its figures before its name: 100000 B in 100 calls, no
  // frees, 40000 B leaked, 100000 at the peak.
  const size_t row_at = rows.rfind("<tr>", alpha_at);
  const std::string alpha_row = rows.substr(row_at, alpha_at - row_at);
  for (const char *v : {"data-v=\"100000.0\"", "data-v=\"100.0\"", "data-v=\"0.0\"", "data-v=\"40000.0\""}) {
    INFO(alpha_row << " has " << v);
    CHECK(alpha_row.find(v) != std::string::npos);
  }
}

}  // namespace

TEST_CASE("memory by thread: each thread's blocks and frees by name, and --thread NAME or TID") {
  for (const char *compress : {"PROF_COMPRESS=1", "PROF_COMPRESS=0"}) {
    INFO(compress);
    const RunResult r = run_under_agent({PROF_NAMED_THREADS_PROGRAM}, {compress});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    REQUIRE(r.memprof_files.size() == 1);
    check_named_threads(r.memprof_files[0]);
  }
}

TEST_CASE("memory by thread when the program's threads write their own events (no writer thread)") {
  // Under a task limit below raw_thread.h's, the agent starts no writer: the
  // producers write, through the same compactor. RLIMIT_NPROC counts the
  // user's every task: run as a user of its own.
  const TempDir dir = agent_dir_for_other_users("threads-solo");
  copy_file(PROF_NAMED_THREADS_PROGRAM, dir / "mem_named_threads", 0755);
  const RunResult r =
      run_bare({"prlimit", "--nproc=64", "setpriv", "--reuid=47214", "--regid=47214",
                "--clear-groups", "env", "LD_PRELOAD=" + dir / "libprof.so",
                "PROF_OUTPUT=" + dir / "prof.%p", dir / "mem_named_threads"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const std::vector<std::string> files = memprof_files_in(dir.path);
  REQUIRE(files.size() == 1);
  check_named_threads(files[0]);
}
