// OwnedFile when the program closes its descriptor and removes its file,
// in either order and with the agent's writes falling between the two: the
// stream is lost once both have happened, and only then.
#include <catch2/catch.hpp>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <iterator>
#include <string>
#include <unistd.h>

#include "stream/owned_file.h"
#include "temp_files.h"

namespace {

const uint8_t kBytes[] = "ten bytes\n";
constexpr size_t kLen = sizeof kBytes - 1;

// A file of the agent's, as adopted after its creation.
struct AgentFile {
  AgentFile() {
    const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644);
    REQUIRE(fd >= 0);
    out.adopt(fd, path.c_str());
  }
  ~AgentFile() { out.close(); }
  long write() { return out.write_all(kBytes, kLen); }
  // A write; the program closes the descriptor; the next write opens the
  // file again, by its path.
  void reopen_by_writing() {
    REQUIRE(write() == 0);
    REQUIRE(close(out.fd()) == 0);
    REQUIRE(write() == 0);
  }
  const TempDir dir{"owned"};
  const std::string path = dir / "p.sysprof";
  prof::OwnedFile out;
};

// What the file holds, by its path.
std::string contents(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

TEST_CASE("a file removed while the agent holds its descriptor is written on, unreported") {
  AgentFile f;
  REQUIRE(f.write() == 0);
  REQUIRE(unlink(f.path.c_str()) == 0);
  CHECK(f.write() == 0);
  CHECK_FALSE(f.out.lost());
  CHECK(f.out.written() == 2 * kLen);
}

TEST_CASE("a file whose descriptor the program closed is opened again and written on") {
  AgentFile f;
  f.reopen_by_writing();
  CHECK(f.write() == 0);
  CHECK_FALSE(f.out.lost());
  CHECK(contents(f.path).size() == 3 * kLen);
}

TEST_CASE("a file closed, then removed, is lost at the next write") {
  AgentFile f;
  REQUIRE(f.write() == 0);
  REQUIRE(close(f.out.fd()) == 0);
  REQUIRE(unlink(f.path.c_str()) == 0);
  CHECK(f.write() == -ENOENT);
  CHECK(f.out.lost());
  CHECK(f.out.written() == kLen);
}

TEST_CASE("a file closed, opened again by a write, then removed, is lost at the next write") {
  AgentFile f;
  f.reopen_by_writing();
  REQUIRE(unlink(f.path.c_str()) == 0);
  CHECK(f.write() == -ENOENT);
  CHECK(f.out.lost());
  CHECK(f.write() == -EBADF);  // nothing more
  CHECK(f.out.written() == 2 * kLen);
}

TEST_CASE("a file closed, opened again by a write, then replaced under its name, is lost") {
  AgentFile f;
  f.reopen_by_writing();
  const std::string other = f.dir / "other";
  const int fd = open(other.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644);
  REQUIRE(fd >= 0);
  close(fd);
  REQUIRE(rename(other.c_str(), f.path.c_str()) == 0);
  CHECK(f.write() == -ESTALE);
  CHECK(f.out.lost());
  CHECK(contents(f.path).empty());  // the program's file, untouched
}
