# SPDX-License-Identifier: BSD-3-Clause
"""gnio-doctor on sysfs trees this test builds: a GPU and a NIC under one PCIe
switch (PIX) with peer memory; across root complexes on two NUMA nodes (SYS);
ACS redirecting P2P on a switch port; a degraded link; no peer-memory module;
different root ports of one root complex (PHB). Each tree gets the expected
distance, verdict, remedy and exit status."""
import json
import os
import shutil
import struct
import subprocess
import tempfile

from gnio_run import BUILD, Checker

DOCTOR = os.path.join(BUILD, "apps", "gnio-doctor", "gnio-doctor")
ck = Checker("doctor")


def config(acs_ctrl=None):
    cfg = bytearray(4096)
    if acs_ctrl is not None:
        struct.pack_into("<IHH", cfg, 0x100, 0x000D | (1 << 16), 0x001F, acs_ctrl)
    return bytes(cfg)


class Tree:
    def __init__(self, peermem=True, osrelease="6.1.0", nvidia="NVRM version: 580.159.04"):
        self.top = tempfile.mkdtemp(prefix="gnio-sysfs-")
        self.sys = os.path.join(self.top, "sys")
        self.proc = os.path.join(self.top, "proc")
        os.makedirs(os.path.join(self.sys, "bus/pci/devices"))
        os.makedirs(os.path.join(self.proc, "sys/kernel"))
        os.makedirs(os.path.join(self.proc, "driver/nvidia"))
        open(os.path.join(self.proc, "sys/kernel/osrelease"), "w").write(osrelease + "\n")
        open(os.path.join(self.proc, "driver/nvidia/version"), "w").write(nvidia + "\n")
        if peermem:
            os.makedirs(os.path.join(self.sys, "module/nvidia_peermem"))
        for node, cpus in ((0, "0-7"), (1, "8-15")):
            d = os.path.join(self.sys, "devices/system/node/node%d" % node)
            os.makedirs(d)
            open(os.path.join(d, "cpulist"), "w").write(cpus + "\n")
        hp = os.path.join(self.sys, "kernel/mm/hugepages/hugepages-2048kB")
        os.makedirs(hp)
        open(os.path.join(hp, "nr_hugepages"), "w").write("1024\n")
        open(os.path.join(hp, "free_hugepages"), "w").write("1000\n")

    def dev(self, path, vendor, cls, numa=0, speed=(16.0, 16), maxlink=(16.0, 16), driver=None,
            acs=None, iommu=None):
        """path: 'pci0000:00/0000:00:01.0/.../BDF'."""
        d = os.path.join(self.sys, "devices", path)
        os.makedirs(d, exist_ok=True)
        bdf = os.path.basename(path)
        files = {"vendor": "0x%04x" % vendor, "device": "0x1234", "class": "0x%06x" % cls,
                 "numa_node": str(numa), "current_link_speed": "%.1f GT/s PCIe" % speed[0],
                 "current_link_width": str(speed[1]), "max_link_speed": "%.1f GT/s PCIe" % maxlink[0],
                 "max_link_width": str(maxlink[1])}
        for k, v in files.items():
            open(os.path.join(d, k), "w").write(v + "\n")
        open(os.path.join(d, "config"), "wb").write(config(acs))
        if driver:
            drv = os.path.join(self.sys, "bus/pci/drivers", driver)
            os.makedirs(drv, exist_ok=True)
            os.symlink(drv, os.path.join(d, "driver"))
        if iommu:
            g = os.path.join(self.sys, "kernel/iommu_groups/7")
            os.makedirs(g, exist_ok=True)
            open(os.path.join(g, "type"), "w").write(iommu + "\n")
            os.symlink(g, os.path.join(d, "iommu_group"))
        os.symlink(d, os.path.join(self.sys, "bus/pci/devices", bdf))

    def switch(self, root, rp, up, downs, acs=None, numa=0):
        self.dev("%s/%s" % (root, rp), 0x8086, 0x060400, numa)
        self.dev("%s/%s/%s" % (root, rp, up), 0x10b5, 0x060400, numa)
        for dn in downs:
            self.dev("%s/%s/%s/%s" % (root, rp, up, dn), 0x10b5, 0x060400, numa, acs=acs)

    def run(self, *extra):
        r = subprocess.run([DOCTOR, "--sysfs", self.sys, "--procfs", self.proc] + list(extra),
                           capture_output=True, text=True, timeout=30)
        return r

    def done(self):
        shutil.rmtree(self.top)


GPU, MLX = 0x10DE, 0x15B3
SW = "pci0000:00/0000:00:01.0/0000:01:00.0"

# 1. One switch: PIX, peer memory: GPUDirect can work.
t = Tree()
t.switch("pci0000:00", "0000:00:01.0", "0000:01:00.0", ["0000:02:00.0", "0000:02:01.0"])
t.dev(SW + "/0000:02:00.0/0000:03:00.0", GPU, 0x030200, driver="nvidia")
t.dev(SW + "/0000:02:01.0/0000:04:00.0", MLX, 0x020000, driver="mlx5_core")
r = t.run()
ck.check(r.returncode == 0, "PIX: exit 0, got %d\n%s" % (r.returncode, r.stdout))
ck.check("<-> NIC 0000:04:00.0: PIX" in r.stdout and "can work" in r.stdout, "PIX:\n" + r.stdout)
j = json.loads(t.run("--json").stdout)
ck.check(j["gpudirect_possible"] and j["pairs"][0]["distance"] == "PIX", "PIX json: %s" % j)
t.done()

# 2. ACS on the switch's downstream ports: P2P redirected: cannot work, remedy named.
t = Tree()
t.switch("pci0000:00", "0000:00:01.0", "0000:01:00.0", ["0000:02:00.0", "0000:02:01.0"], acs=0x001D)
t.dev(SW + "/0000:02:00.0/0000:03:00.0", GPU, 0x030200)
t.dev(SW + "/0000:02:01.0/0000:04:00.0", MLX, 0x020000)
r = t.run()
ck.check(r.returncode == 1, "ACS: exit 1, got %d" % r.returncode)
ck.check("[FAIL] acs" in r.stdout and "0000:02:00.0" in r.stdout and "setpci" in r.stdout, "ACS:\n" + r.stdout)
t.done()

# 3. Across root complexes on two NUMA nodes: SYS, warned with the hop, still possible.
t = Tree()
t.dev("pci0000:00/0000:00:01.0", 0x8086, 0x060400, 0)
t.dev("pci0000:00/0000:00:01.0/0000:01:00.0", GPU, 0x030200, numa=0)
t.dev("pci0000:80/0000:80:01.0", 0x8086, 0x060400, 1)
t.dev("pci0000:80/0000:80:01.0/0000:81:00.0", MLX, 0x020000, numa=1)
r = t.run()
ck.check(r.returncode == 0 and ": SYS" in r.stdout, "SYS:\n" + r.stdout)
ck.check("[warn] placement" in r.stdout and "NUMA 0" in r.stdout and "NUMA 1" in r.stdout, "SYS hop:\n" + r.stdout)
t.done()

# 4. Degraded link: x8 at 8 GT/s where x16 at 16 GT/s is possible.
t = Tree()
t.switch("pci0000:00", "0000:00:01.0", "0000:01:00.0", ["0000:02:00.0", "0000:02:01.0"])
t.dev(SW + "/0000:02:00.0/0000:03:00.0", GPU, 0x030200, speed=(8.0, 8))
t.dev(SW + "/0000:02:01.0/0000:04:00.0", MLX, 0x020000)
r = t.run()
ck.check("[warn] pcie link" in r.stdout and "8.0 GT/s x8, can do 16.0 GT/s x16" in r.stdout, "link:\n" + r.stdout)
t.done()

# 5. No peer memory: no nvidia_peermem, old kernel: cannot work.
t = Tree(peermem=False, osrelease="5.10.0")
t.switch("pci0000:00", "0000:00:01.0", "0000:01:00.0", ["0000:02:00.0", "0000:02:01.0"])
t.dev(SW + "/0000:02:00.0/0000:03:00.0", GPU, 0x030200)
t.dev(SW + "/0000:02:01.0/0000:04:00.0", MLX, 0x020000)
r = t.run()
ck.check(r.returncode == 1 and "[FAIL] peer memory" in r.stdout and "modprobe nvidia_peermem" in r.stdout,
         "no peermem:\n" + r.stdout)
t.done()

# 6. DMA-BUF instead: 6.x kernel with the open kernel module; different root ports: PHB;
#    IOMMU translating: warned with iommu=pt.
t = Tree(peermem=False, nvidia="NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04")
t.dev("pci0000:00/0000:00:01.0", 0x8086, 0x060400)
t.dev("pci0000:00/0000:00:01.0/0000:01:00.0", GPU, 0x030200, iommu="DMA-FQ")
t.dev("pci0000:00/0000:00:02.0", 0x8086, 0x060400)
t.dev("pci0000:00/0000:00:02.0/0000:02:00.0", MLX, 0x020000)
r = t.run()
ck.check(r.returncode == 0 and ": PHB" in r.stdout and "DMA-BUF" in r.stdout, "PHB/DMA-BUF:\n" + r.stdout)
ck.check("[warn] iommu" in r.stdout and "iommu=pt" in r.stdout, "iommu:\n" + r.stdout)
t.done()

# 7. Only a virtio NIC (as on a cloud VM): it cannot DMA into GPU memory: cannot work.
t = Tree()
t.switch("pci0000:00", "0000:00:01.0", "0000:01:00.0", ["0000:02:00.0", "0000:02:01.0"])
t.dev(SW + "/0000:02:00.0/0000:03:00.0", GPU, 0x030200)
t.dev(SW + "/0000:02:01.0/0000:04:00.0", 0x1AF4, 0x020000, driver="virtio-pci")
r = t.run()
ck.check(r.returncode == 1 and "[FAIL] nic" in r.stdout and "--mem=pinned" in r.stdout, "virtio NIC:\n" + r.stdout)
t.done()

# 8. Odd sysfs values: control characters and quotes in the IOMMU type, the driver name and the
#    root complex folder; a link of "nan GT/s" and width -3; absurd hugepage and NUMA counts.
#    JSON stays valid (every string escaped, no NaN/Infinity), absurd values are "unknown" and
#    said so, and a pair whose link cannot be read is not graded ok nor "can work".
t = Tree()
root = 'pci0000:0"\t0'
t.dev(root + "/0000:00:01.0", 0x8086, 0x060400)
t.dev(root + "/0000:00:01.0/0000:01:00.0", GPU, 0x030200, driver='nv"\tidia', iommu='DMA\n"x"',
      numa=99999999999)
t.dev(root + "/0000:00:01.0/0000:01:00.1", MLX, 0x020000, driver="mlx5_core")
gpu_dir = os.path.join(t.sys, "devices", root, "0000:00:01.0/0000:01:00.0")
open(os.path.join(gpu_dir, "current_link_speed"), "w").write("nan GT/s PCIe\n")
open(os.path.join(gpu_dir, "current_link_width"), "w").write("-3\n")
open(os.path.join(t.sys, "kernel/mm/hugepages/hugepages-2048kB/nr_hugepages"), "w").write("-5\n")
r = t.run()
ck.check("hugepages unknown" in r.stdout and "18446744073709551606" not in r.stdout, "hugepages:\n" + r.stdout)
ck.check("NUMA unknown" in r.stdout and "1215752191" not in r.stdout, "numa:\n" + r.stdout)
ck.check("[?   ] pcie link" in r.stdout and "can work" not in r.stdout.split("verdict")[0], "link:\n" + r.stdout)
ck.check(r.returncode == 1, "unknown link: not counted as able (exit %d)" % r.returncode)


def no_constants(c):
    raise ValueError("non-finite number in JSON: " + c)


out = t.run("--json").stdout
try:
    j = json.loads(out, parse_constant=no_constants)
    dev = [d for d in j["devices"] if d["kind"] == "gpu"][0]
    ck.check(dev["driver"] == 'nv"\tidia' and dev["root"] == root and dev["numa"] is None and
             dev["link"][0] is None and j["hugepages_mb"] is None, "odd values in JSON: %s" % dev)
    ck.check(j["pairs"][0]["gpudirect"] is None, "unknown verdict in JSON: %s" % j["pairs"][0])
except ValueError as e:
    ck.check(False, "JSON invalid: %s\n%s" % (e, out))
t.done()

# 9. Missing link files: unknown, not "0.0 GT/s x0 [ok]".
t = Tree()
t.switch("pci0000:00", "0000:00:01.0", "0000:01:00.0", ["0000:02:00.0", "0000:02:01.0"])
t.dev(SW + "/0000:02:00.0/0000:03:00.0", GPU, 0x030200)
t.dev(SW + "/0000:02:01.0/0000:04:00.0", MLX, 0x020000)
for f in ("current_link_speed", "current_link_width"):
    os.unlink(os.path.join(t.sys, "devices", SW, "0000:02:01.0/0000:04:00.0", f))
r = t.run()
ck.check("[?   ] pcie link" in r.stdout and "0.0 GT/s" not in r.stdout and r.returncode == 1,
         "missing link files:\n" + r.stdout)
t.done()

# 10. 60 GPUs and 60 NICs: every one listed (no silent limit).
t = Tree()
for i in range(60):
    t.dev("pci0000:00/0000:00:%02x.0/0000:%02x:00.0" % (i % 32, i + 1), GPU, 0x030200)
    t.dev("pci0000:00/0000:00:%02x.0/0000:%02x:00.1" % (i % 32, i + 1), MLX, 0x020000)
r = t.run()
ck.check("60 GPU(s), 60 NIC(s)" in r.stdout and r.stdout.count("  GPU  ") == 60 and
         r.stdout.count("  NIC  ") == 60, "120 devices:\n" + r.stdout[:400])
j = json.loads(t.run("--json").stdout)
ck.check(len(j["devices"]) == 120 and len(j["pairs"]) == 60, "120 devices in JSON: %d" % len(j["devices"]))
t.done()

# Bad option, bad tree.
ck.check(subprocess.run([DOCTOR, "--bogus"], capture_output=True).returncode == 2, "bad option exits 2")
ck.check(subprocess.run([DOCTOR, "--sysfs", "/nonexistent"], capture_output=True).returncode == 2,
         "bad sysfs exits 2")
ck.finish()
