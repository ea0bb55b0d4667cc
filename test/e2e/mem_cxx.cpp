// C++ new/delete go through malloc/free: 30 x new char[1234] (freed with
// delete[]), 40 x new Widget (48 B) of which 10 are leaked.
#include <cstdio>
struct Widget {
  char bytes[48];
};
Widget *volatile keep;
int main() {
  for (int i = 0; i < 30; i++) {
    char *volatile p = new char[1234];
    delete[] p;
  }
  for (int i = 0; i < 40; i++) {
    Widget *w = new Widget;
    keep = w;
    if (i >= 10) delete w;
  }
  return 0;
}
