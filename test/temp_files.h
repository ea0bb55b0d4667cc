// TempDir and TempFile: fresh temporary directories and files for the tests
// (as heaptrack's tests/auto/tempfile.h), removed with everything in them
// when the last copy goes, also when a test stops early.
#pragma once

#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

// Removes a directory and everything in it.
inline void remove_tree(const std::string &dir) {
  nftw(dir.c_str(), [](const char *path, const struct stat *, int, FTW *) { return remove(path); },
       16, FTW_DEPTH | FTW_PHYS);
}

// Copies file `from` to `to` with `mode`; throws when it cannot.
inline void copy_file(const std::string &from, const std::string &to, mode_t mode) {
  {
    std::ifstream in(from, std::ios::binary);
    std::ofstream out(to, std::ios::binary);
    if (!in || !(out << in.rdbuf()) || !out.flush())
      throw std::system_error(errno, std::generic_category(), "copying " + from + " to " + to);
  }
  if (chmod(to.c_str(), mode) != 0)
    throw std::system_error(errno, std::generic_category(), "chmod " + to);
}

// A fresh directory under /tmp, named /tmp/libprof-KIND-XXXXXX.
class TempDir {
 public:
  explicit TempDir(const std::string &kind = "test")
      : path(make(kind)), removal_(std::make_shared<Removal>(path)) {}
  std::string operator/(const std::string &name) const { return path + "/" + name; }

  std::string path;

 private:
  struct Removal {
    explicit Removal(std::string dir) : path(std::move(dir)) {}
    ~Removal() { remove_tree(path); }
    std::string path;
  };
  static std::string make(const std::string &kind) {
    std::string tmpl = "/tmp/libprof-" + kind + "-XXXXXX";
    if (!mkdtemp(&tmpl[0])) throw std::system_error(errno, std::generic_category(), "mkdtemp");
    return tmpl;
  }
  std::shared_ptr<Removal> removal_;  // shared by the copies
};

// A fresh file under /tmp holding `bytes`.
class TempFile {
 public:
  explicit TempFile(const std::vector<uint8_t> &bytes = {}) {
    path = dir_ / "file";
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char *>(bytes.data()), std::streamsize(bytes.size()));
    if (!out.flush()) throw std::system_error(errno, std::generic_category(), "writing " + path);
  }

  std::string path;

 private:
  TempDir dir_;
};
