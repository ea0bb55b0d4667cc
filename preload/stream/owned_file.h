// OwnedFile: one of the agent's output files, written through a descriptor
// in the program's own table, which the program may close (daemons loop
// over every descriptor, closefrom(3)) and then reuse for its own files.
//
// Invariants:
// - The descriptor sits high (move_fd_high()), away from the numbers that
//   programs open next or dup2() onto, and is close-on-exec.
// - Before each write, and before closing it, the agent checks that it
//   still names the file (device and inode). When the program has closed
//   it, or its number names another file now, the file is opened again by
//   its absolute path (neither created nor truncated, and only if it is the
//   same file) at the offset written so far, and writing goes on. From then
//   on the file is written by its name: before each write the agent also
//   checks that the path still names it, so a program that closes the
//   descriptor and removes the file loses the stream whichever comes first
//   (the agent's reopen may fall between the two). When the reopen fails,
//   nothing more is written (lost()). So the agent never writes into, nor
//   closes, a descriptor of the program's.
// - Raw system calls only, errno untouched: usable in signal handlers and on
//   the ring's raw writer. One writer at a time (the caller's flag).
// - With a compressor (compress_with()), what write_all() is given goes
//   through it (stream_compressor.h): the file is one zstd frame, which
//   sync() makes decodable up to there and end() closes. written() counts
//   the file's (compressed) bytes. With a compactor (compact_with(),
//   memprof streams), it goes through that first (stream_compactor.h).
#pragma once

#include <cstddef>
#include <cstdint>

namespace prof {

class StreamCompactor;
class StreamCompressor;
struct TableFile;

class OwnedFile {
 public:
  // Compresses what is written to the files adopted from now on (nullptr:
  // plain).
  void compress_with(StreamCompressor *compressor) { compressor_ = compressor; }
  // The file's bytes are not those written (compressed, or compacted).
  bool transforms() const { return compressor_ || compactor_; }
  // Takes the ring's events (ring_event.h) out of what is written, as
  // compact or memprof events, before compressing (memprof streams; nullptr:
  // no events); the stream's opening passes as it is until events_follow().
  void compact_with(StreamCompactor *compactor) { compactor_ = compactor; }
  // The compactor's table of live blocks goes to the ring file (event_ring.h).
  void keep_compactor_table_in(TableFile *file);
  void events_follow();
  // Takes fd, just opened at `path` (relative to the current directory).
  void adopt(int fd, const char *path);
  // Writes all of [data, data + len); 0, or -errno.
  long write_all(const uint8_t *data, size_t len);
  // Everything written so far reaches the file (sync), compressed as a
  // decodable frame, and the frame ends (end). 0, or -errno.
  long sync();
  long end();
  // The descriptor still names the file, a regular one, but no directory
  // entry does any more (it was removed, or its directory): written on,
  // it is lost when the last descriptor of it closes.
  bool removed() const;
  // Closes the descriptor if it still names the file; forgets it either way.
  void close();
  int fd() const { return fd_; }
  // Bytes written so far: where the file ends (read from any thread).
  uint64_t written() const { return __atomic_load_n(&written_, __ATOMIC_RELAXED); }
  // The program closed the descriptor and the file could not be opened
  // again (write_all() then fails with the reason): the stream ends at
  // written().
  bool lost() const { return lost_; }

 private:
  bool names_file(int fd) const;
  // The path still names the file (neither removed nor replaced).
  bool name_names_file() const;
  // A descriptor naming the file again, or -errno.
  long reopen();
  // Writes bytes to the file as they are; 0, or -errno.
  long write_bytes(const uint8_t *data, size_t len);
  static long write_bytes_to(void *file, const uint8_t *data, size_t len);
  static long compress_to(void *file, const uint8_t *data, size_t len);
  // Where the compactor's output goes: the compressor, or the file.
  using Sink = long (*)(void *file, const uint8_t *data, size_t len);
  Sink next_sink() const;
  // What the compactor still holds goes on.
  long drain_compactor();

  int fd_ = -1;
  uint64_t dev_ = 0, ino_ = 0;
  bool seekable_ = false;
  bool lost_ = false;
  bool by_name_ = false;  // reopened by its path: written while the path names it
  uint64_t written_ = 0;
  StreamCompressor *compressor_ = nullptr;
  StreamCompactor *compactor_ = nullptr;
  char path_[4096 + 608] = {};  // the current directory, '/', the path
};

// A StreamWriter sink (stream_writer.h) writing to the OwnedFile `file`:
// false, with errno set, when the write fails.
bool owned_file_sink(void *file, const uint8_t *data, size_t len);

// Moves fd to a high number (close-on-exec), closing the old one; returns
// the new number, or fd itself when it cannot be moved. errno untouched.
int move_fd_high(int fd);

}  // namespace prof
