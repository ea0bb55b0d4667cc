/* A heap of known shape, in blocks of 1000 B (glibc's usable size of a
   1000 B request is exactly 1000 B): it grows to 1000 blocks (1,000,000 B),
   falls to 200, grows to 1700 (the peak, 1,700,000 B), and falls to none,
   sleeping 10 ms between the phases so that their times are apart. */
#include <stdlib.h>
#include <time.h>

static void *blocks[1700];

static void pause_10ms(void) {
  struct timespec t = {0, 10 * 1000 * 1000};
  nanosleep(&t, NULL);
}

int main(void) {
  for (int i = 0; i < 1000; i++) blocks[i] = malloc(1000);
  pause_10ms();
  for (int i = 200; i < 1000; i++) free(blocks[i]);
  pause_10ms();
  for (int i = 200; i < 1700; i++) blocks[i] = malloc(1000);
  pause_10ms();
  for (int i = 0; i < 1700; i++) free(blocks[i]);
  return 0;
}
