/* A program that never allocates: it reads its own memory map with system
   calls alone (no stdio, no malloc) and exits 0 when the map has no [heap],
   the break glibc's malloc grows on its first use; 1 when it has one; 2 when
   the map cannot be read. Under the agent it shows that the agent left the
   program's heap alone. */
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

int main(void) {
  static char map[1 << 20];
  const int fd = open("/proc/self/maps", O_RDONLY);
  if (fd < 0) return 2;
  size_t len = 0;
  ssize_t got;
  while (len < sizeof map - 1 && (got = read(fd, map + len, sizeof map - 1 - len)) > 0)
    len += (size_t)got;
  close(fd);
  map[len] = 0;
  return strstr(map, "[heap]") ? 1 : 0;
}
