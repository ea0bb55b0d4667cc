# A Python program to attach to for memory (test/attach_e2e.cpp): a thread
# makes zeroed bytes objects of 100000 bytes, each a calloc of the
# interpreter's (bytes_new, _PyBytes_FromSize, _PyObject_Calloc: larger
# than its small-object allocator takes), until the file named by argv[1] exists; then prints a checksum
# of fixed work and exits 0.
import os
import sys
import threading
import zlib

stop = sys.argv[1]


def work():
    kept = []
    while not os.path.exists(stop):
        kept.append(bytes(100000))
        if len(kept) > 16:
            kept.clear()


t = threading.Thread(target=work)
t.start()
print("ready", flush=True)
t.join()
print("checksum", zlib.crc32(bytes(100000)))
