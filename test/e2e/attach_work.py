# A Python program to attach to (test/attach_e2e.cpp): two threads hash a
# buffer with zlib.crc32 (libz's crc32_z in their host stacks) until the file
# named by argv[1] exists; then prints a checksum of fixed work and exits 0.
import os
import sys
import threading
import zlib

data = bytes(range(256)) * 4096
stop = sys.argv[1]


def work():
    n = 0
    while not os.path.exists(stop):
        n = zlib.crc32(data, n)


t = threading.Thread(target=work)
t.start()
print("ready", flush=True)
work()
t.join()
print("checksum", zlib.crc32(data * 4))
