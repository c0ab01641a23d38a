#!/usr/bin/env python3
"""A cuBLAS program for the ozcrt-ab test with the real libozcrt.so: one cublasDgemm_v2 through tests/fake's local_client.

usage: ab_shim_program.py LOCAL_CLIENT

LOCAL_CLIENT is tests/fake's local_client13 (it links the fake cuBLAS). The
call is forwarded to the fake both without the shim and under it (no GPU), so
both runs print the same line: the status the fake answered and its call count."""
import ctypes
import sys

client = ctypes.CDLL(sys.argv[1])
client.local_client_dgemm.restype = ctypes.c_int
client.local_client_dgemm.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p,
                                      ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p)]
client.local_client_destroy.argtypes = [ctypes.c_void_p]
h = ctypes.c_void_p()
status = client.local_client_dgemm(300, 200, 100, 0x1000, 0x2000, 0x3000, ctypes.byref(h))
print("dgemm 300 200 100 status %d calls %d" % (status, client.local_client_count()))
client.local_client_destroy(h)
