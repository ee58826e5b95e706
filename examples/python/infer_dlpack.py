#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""gnio's batches in Python: requests arriving on DPDK ports become the rows of DLPack tensors
that PyTorch (torch.from_dlpack) or NumPy (numpy.from_dlpack) take without a copy; the model
(gnio-infer's digit classifier, apps/gnio-infer) runs on each batch there, and every request is
answered on the wire from its row of the result, in order.

Through ctypes only: libgnio's batch API (<gnio/gnio_batch.h>), gnio_conf_set() for the
configuration, the pipeline's start, poll and stop. Request and answer formats are gnio-infer's
(apps/gnio-infer/README.md). With --consumer host the rows are host memory (kDLCPU); with
--consumer cuda-batch they are GPU memory (kDLCUDA) and the model runs in PyTorch on the GPU,
on the CUDA stream gnio gives with the batch (torch.cuda.ExternalStream), writing the result into
gnio's result tensor, which gnio copies back on the same stream.

  infer_dlpack.py [--lib PATH] [--model F] [--framework auto|torch|numpy] [--consumer host|cuda-batch]
                  [--batch-rows B] [--batch-us T] [--max-packets N] [--udp-port P] -- EAL-ARGS
Prints one line per run with the batches, rows and the end-of-run check; exits 1 if it fails.
"""
import argparse
import ctypes as C
import os
import struct
import sys
import time

import numpy as np


# ---- DLPack and gnio's structures, as C lays them out ----
class DLDataType(C.Structure):
    _fields_ = [("code", C.c_uint8), ("bits", C.c_uint8), ("lanes", C.c_uint16)]


class DLDevice(C.Structure):
    _fields_ = [("device_type", C.c_int), ("device_id", C.c_int)]


class DLTensor(C.Structure):
    _fields_ = [("data", C.c_void_p), ("device", DLDevice), ("ndim", C.c_int32), ("dtype", DLDataType),
                ("shape", C.POINTER(C.c_int64)), ("strides", C.POINTER(C.c_int64)), ("byte_offset", C.c_uint64)]


class DLManagedTensor(C.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", C.c_void_p), ("deleter", C.c_void_p)]


class GnioPkt(C.Structure):
    _fields_ = [("data", C.c_void_p), ("len", C.c_uint32), ("pkt_len", C.c_uint32), ("rx_port", C.c_uint16),
                ("tx_port", C.c_uint16), ("nb_segs", C.c_uint16), ("rsvd", C.c_uint16), ("segs", C.c_void_p)]


class GnioBatch(C.Structure):
    _fields_ = [("tin", C.POINTER(DLManagedTensor)), ("out", C.POINTER(DLTensor)), ("stream", C.c_void_p),
                ("seq", C.c_uint64)]


ROW = C.CFUNCTYPE(C.c_uint16, C.POINTER(GnioPkt), C.c_void_p, C.c_void_p)
BATCH = C.CFUNCTYPE(C.c_int, C.POINTER(GnioBatch), C.c_void_p)
ANSWER = C.CFUNCTYPE(C.c_uint16, C.POINTER(GnioPkt), C.c_void_p, C.c_void_p)
HOST_ITEM = C.CFUNCTYPE(C.c_uint32, C.c_void_p, C.c_uint32, C.c_uint16, C.c_uint16, C.c_void_p, C.c_void_p)


class GnioBatchHandler(C.Structure):
    _fields_ = [("in_dtype", DLDataType), ("in_cols", C.c_uint32), ("out_dtype", DLDataType),
                ("out_cols", C.c_uint32), ("row", ROW), ("batch", BATCH), ("answer", ANSWER),
                ("row_at", C.c_void_p)]


class GnioHandler(C.Structure):
    _fields_ = [("name", C.c_char_p), ("help", C.c_char_p), ("flags", C.c_uint32), ("host_item", HOST_ITEM),
                ("cuda", C.c_void_p), ("host_pkt", C.c_void_p), ("batch", C.POINTER(GnioBatchHandler))]


K_DL_CPU, K_DL_CUDA, K_DL_UINT, K_DL_FLOAT = 1, 2, 1, 2
NO_DELETE = C.CFUNCTYPE(None, C.c_void_p)(lambda t: None)
DROP_MALFORMED, DROP_NOT_HANDLED = 0x8000 | 1, 0x8000 | 2
PyCapsule_New = C.pythonapi.PyCapsule_New
PyCapsule_New.restype = C.py_object
PyCapsule_New.argtypes = [C.c_void_p, C.c_char_p, C.c_void_p]


class Rows:
    """A tensor as an object a framework's from_dlpack() takes: it hands over the managed tensor
    (the framework calls its deleter when its own tensor goes). The work is ordered on gnio's
    stream by the caller, so the stream a framework asks for is not waited on here."""

    def __init__(self, managed, device):
        self.managed, self.device = managed, device

    def __dlpack__(self, stream=None, **kw):
        return PyCapsule_New(self.managed, b"dltensor", None)

    def __dlpack_device__(self):
        return (self.device.device_type, self.device.device_id)


def csum(b, s=0):
    if len(b) % 2:
        b += b"\0"
    for i in range(0, len(b), 2):
        s += b[i] << 8 | b[i + 1]
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return s


def request(p, port):
    """Where a request's IPv4 header is and how long, or its drop verdict."""
    data = C.string_at(p.data, p.len)
    if len(data) < 34 or data[12:14] != b"\x08\x00" or data[14] >> 4 != 4:
        return None, DROP_NOT_HANDLED
    ihl = (data[14] & 15) * 4
    u = 14 + ihl
    if ihl < 20 or data[23] != 17 or len(data) < u + 8 or (port and struct.unpack(">H", data[u + 2:u + 4])[0] != port):
        return None, DROP_NOT_HANDLED
    if struct.unpack(">H", data[u + 4:u + 6])[0] != 76 or struct.unpack(">H", data[16:18])[0] != ihl + 76 or \
            len(data) < u + 76 or max(data[u + 12:u + 76]) > 16:
        return None, DROP_MALFORMED
    return (data, ihl), 0


def main():
    ap = argparse.ArgumentParser()
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--lib", default="libgnio.so.0")
    ap.add_argument("--model", default=os.path.join(here, "..", "..", "apps", "gnio-infer", "digits-mlp.bin"))
    ap.add_argument("--framework", choices=["auto", "torch", "numpy"], default="auto")
    ap.add_argument("--consumer", choices=["host", "cuda-batch"], default="host")
    ap.add_argument("--batch-rows", type=int, default=64)
    ap.add_argument("--batch-us", type=int, default=0)
    ap.add_argument("--max-packets", type=int, default=0)
    ap.add_argument("--udp-port", type=int, default=5005)
    ap.add_argument("eal", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    eal = [x for x in a.eal if x != "--"]
    torch = None
    if a.framework in ("auto", "torch"):
        try:
            import torch
        except ImportError:
            if a.framework == "torch":
                sys.exit("infer_dlpack: no torch here")
    raw = open(a.model, "rb").read()
    if raw[:8] != b"GNIOMLP1" or struct.unpack("<4I", raw[8:24]) != (64, 32, 10, 0):
        sys.exit("infer_dlpack: %s: not a 64-32-10 gnio MLP" % a.model)
    f = np.frombuffer(raw[24:], dtype="<f4")
    w1, b1 = f[:2048].reshape(32, 64), f[2048:2080]
    w2, b2 = f[2080:2400].reshape(10, 32), f[2400:2410]
    if a.consumer == "cuda-batch" and torch is None:
        sys.exit("infer_dlpack: --consumer cuda-batch needs PyTorch (GPU tensors)")
    if torch is not None:
        tw = [torch.from_numpy(x.copy()) for x in (w1, b1, w2, b2)]
        if a.consumer == "cuda-batch":
            tw = [x.cuda() for x in tw]
    lib = C.CDLL(a.lib, mode=C.RTLD_GLOBAL)
    lib.gnio_pipeline_create.restype = C.c_void_p
    lib.gnio_pipeline_create.argtypes = [C.c_void_p, C.c_char_p, C.c_size_t]
    for fn in ("gnio_pipeline_start", "gnio_pipeline_poll", "gnio_pipeline_stop", "gnio_pipeline_destroy"):
        getattr(lib, fn).argtypes = [C.c_void_p]
    lib.gnio_pipeline_summary.argtypes = [C.c_void_p, C.c_char_p, C.c_size_t]
    lib.gnio_conf_size.restype = C.c_size_t
    lib.gnio_batch_host_item.argtypes = [C.c_void_p, C.c_void_p, C.c_uint32, C.c_uint16, C.c_uint16, C.c_void_p,
                                         C.c_void_p]
    lib.gnio_batch_host_item.restype = C.c_uint32

    def row(pkt, dst, state):
        req, v = request(pkt.contents, a.udp_port)
        if req is None:
            return v
        data, ihl = req
        C.memmove(dst, data[14 + ihl + 12:14 + ihl + 76], 64)
        return 0

    def batch(b, state):
        b = b.contents
        out = b.out.contents
        n = out.shape[0]
        rows = b.tin.contents.dl_tensor
        if rows.device.device_type == K_DL_CUDA:
            # On gnio's stream: the rows' copy is queued there, and gnio copies the result back after
            # what is queued here. gnio's result tensor as a torch tensor (gnio keeps it: no deleter).
            res = DLManagedTensor(out, None, C.cast(NO_DELETE, C.c_void_p))
            with torch.cuda.stream(torch.cuda.ExternalStream(b.stream, device=rows.device.device_id)):
                x = torch.from_dlpack(Rows(C.addressof(b.tin.contents), rows.device)).to(torch.float32)
                torch.from_dlpack(Rows(C.addressof(res), rows.device)).copy_(
                    torch.relu(x @ tw[0].T + tw[1]) @ tw[2].T + tw[3])
            return 0
        if torch is not None:
            x = torch.from_dlpack(Rows(C.addressof(b.tin.contents), rows.device)).to(torch.float32)
            s = (torch.relu(x @ tw[0].T + tw[1]) @ tw[2].T + tw[3]).numpy()
        else:
            x = np.from_dlpack(Rows(C.addressof(b.tin.contents), rows.device)).astype(np.float32)
            s = np.maximum(x @ w1.T + b1, 0) @ w2.T + b2
        np.ctypeslib.as_array(C.cast(out.data, C.POINTER(C.c_float)), shape=(n, 10))[:] = s
        return 0

    def answer(pkt, out_row, state):
        p = pkt.contents
        req, _ = request(p, a.udp_port)
        data, ihl = req
        scores = C.string_at(out_row, 40)
        cls = int(np.argmax(np.frombuffer(scores, dtype="<f4")))
        u = 14 + ihl
        ip = bytearray(data[14:u])
        ip[2:4] = struct.pack(">H", ihl + 56)
        ip[10:12] = b"\0\0"
        ip[12:16], ip[16:20] = data[30:34], data[26:30]
        ip[10:12] = struct.pack(">H", ~csum(bytes(ip)) & 0xffff)
        udp = bytearray(data[u + 2:u + 4] + data[u:u + 2] + struct.pack(">HH", 56, 0) + data[u + 8:u + 12] +
                        bytes([cls, 0, 0, 0]) + scores)
        c = ~csum(bytes(udp), csum(bytes(ip[12:20])) + 17 + 56) & 0xffff
        udp[6:8] = struct.pack(">H", c or 0xffff)
        frame = data[6:12] + data[0:6] + data[12:14] + bytes(ip) + bytes(udp)
        C.memmove(p.data, frame, len(frame))
        return p.rx_port

    bh = GnioBatchHandler(DLDataType(K_DL_UINT, 8, 1), 64, DLDataType(K_DL_FLOAT, 32, 1), 10,
                          ROW(row), BATCH(batch), ANSWER(answer))

    def host_item(mbufs, nb, rx_port, tx_port, verdicts, state):
        return lib.gnio_batch_host_item(C.byref(bh), mbufs, nb, rx_port, tx_port, verdicts, state)

    h = GnioHandler(b"py-infer", b"gnio-infer's model in Python, on DLPack batches", 0, HOST_ITEM(host_item),
                    None, None, C.pointer(bh))
    argv = (C.c_char_p * (len(eal) + 1))(b"infer_dlpack", *[x.encode() for x in eal])
    if lib.rte_eal_init(len(eal) + 1, argv) < 0:
        sys.exit("infer_dlpack: EAL init failed")
    if lib.gnio_handler_register(C.byref(h)) != 0:
        sys.exit("infer_dlpack: cannot register the handler")
    conf = C.create_string_buffer(lib.gnio_conf_size())
    lib.gnio_conf_defaults(conf)
    values = {"consumer.name": a.consumer, "consumer.handler": "py-infer",
              "queue.item_pkts": str(a.batch_rows), "rx.burst": str(min(a.batch_rows, 32)),
              "queue.flush_us": str(a.batch_us), "rx.max_packets": str(a.max_packets)}
    if a.consumer == "host":
        values["gpu.name"] = "host"
    keep = {k: C.create_string_buffer(v.encode()) for k, v in values.items()}
    for k, v in keep.items():
        if lib.gnio_conf_set(conf, k.encode(), v) != 0:
            sys.exit("infer_dlpack: cannot set %s" % k)
    err = C.create_string_buffer(256)
    p = lib.gnio_pipeline_create(conf, err, 256)
    if not p:
        sys.exit("infer_dlpack: %s" % err.value.decode())
    if lib.gnio_pipeline_start(p) != 0:
        sys.exit("infer_dlpack: cannot start")
    while lib.gnio_pipeline_poll(p) == 0:
        time.sleep(0.002)
    lib.gnio_pipeline_stop(p)

    class Counts(C.Structure):
        _fields_ = [("batches", C.c_uint64), ("rows", C.c_uint64), ("given_back", C.c_uint64), ("failed", C.c_uint64),
                    ("most_rows", C.c_uint32)]
    bc = Counts()
    lib.gnio_batch_counts(C.byref(bc))
    line = C.create_string_buffer(256)
    ok = lib.gnio_pipeline_summary(p, line, 256) == 1 and bc.given_back == bc.batches and bc.failed == 0
    print("infer_dlpack (%s, %s): %d batches, %d rows (at most %d a batch), %d given back; %s" % (
        "torch " + torch.__version__ if torch is not None else "numpy " + np.__version__, a.consumer, bc.batches, bc.rows,
        bc.most_rows, bc.given_back, line.value.decode()))
    lib.gnio_pipeline_destroy(p)
    lib.rte_eal_cleanup()
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
