"""The simulated ``nvidia-smi -q`` and ``nvidia-smi nvlink -s`` of the demo's nvidia-smi stand-in.

Laid out like the real driver's (580.x, captured in test/fixtures/preflight/), so nsa-dbg's parser
reads both the same way; each fault of NVSMI's ``_faults()`` changes the line the real one would.
"""

from __future__ import annotations

import time

NVLINKS = 18


def query_log(c, s, faults, now):
    """c: the shim's constants (module), s: its sample, faults: set of fault names"""
    w = 44

    def kv(indent, key, val):
        return " " * indent + key.ljust(w - indent) + ": " + str(val)

    def active(on):
        return "Active" if on else "Not Active"

    throttle = "throttle" in faults
    dram_ue = 2 if "ecc" in faults else 0
    remap = "remap" in faults
    x4 = "pcie-x4" in faults
    ecc = []
    for kind in ("Volatile", "Aggregate"):
        ecc += [
            "        " + kind,
            kv(12, "SRAM Correctable", 0),
            kv(12, "SRAM Uncorrectable Parity", 0),
            kv(12, "SRAM Uncorrectable SEC-DED", 0),
            kv(12, "DRAM Correctable", 0),
            kv(12, "DRAM Uncorrectable", dram_ue),
        ]
    out = [
        "",
        "==============NVSMI LOG==============",
        "",
        kv(0, "Timestamp", time.strftime("%a %b %d %H:%M:%S %Y", time.localtime(now))),
        kv(0, "Driver Version", c.DRIVER_VERSION),
        kv(0, "CUDA Version", c.CUDA_VERSION),
        "",
        kv(0, "Attached GPUs", "1"),
        "GPU " + c.BUS_ID,
        kv(4, "Product Name", c.GPU_NAME_LONG),
        kv(4, "Persistence Mode", "Disabled" if "persistence-off" in faults else "Enabled"),
        "    MIG Mode",
        kv(8, "Current", "Enabled" if "mig" in faults else "Disabled"),
        kv(8, "Pending", "Enabled" if "mig" in faults else "Disabled"),
        kv(4, "GPU UUID", c.UUID),
        "    PCI",
        kv(8, "Bus Id", c.BUS_ID),
        "        GPU Link Info",
        "            PCIe Generation",
        kv(16, "Max", 5),
        kv(16, "Current", 3 if x4 else 5),
        kv(16, "Device Current", 3 if x4 else 5),
        kv(16, "Device Max", 5),
        kv(16, "Host Max", 5),
        "            Link Width",
        kv(16, "Max", "16x"),
        kv(16, "Current", "4x" if x4 else "16x"),
        kv(4, "Performance State", "P0"),
        "    Clocks Event Reasons",
        kv(8, "Idle", active(not s["util"])),
        kv(8, "Applications Clocks Setting", active(False)),
        kv(8, "SW Power Cap", active(False)),
        kv(8, "HW Slowdown", active(throttle)),
        kv(12, "HW Thermal Slowdown", active(throttle)),
        kv(12, "HW Power Brake Slowdown", active(False)),
        kv(8, "Sync Boost", active(False)),
        kv(8, "SW Thermal Slowdown", active(False)),
        kv(8, "Display Clock Setting", active(False)),
        "    FB Memory Usage",
        kv(8, "Total", f"{c.MEM_TOTAL} MiB"),
        kv(8, "Reserved", "616 MiB"),
        kv(8, "Used", f"{s['used']} MiB"),
        kv(8, "Free", f"{c.MEM_TOTAL - 616 - s['used']} MiB"),
        "    Utilization",
        kv(8, "GPU", f"{s['util']} %"),
        kv(8, "Memory", f"{s['mem_util']} %"),
        "    ECC Mode",
        kv(8, "Current", "Enabled"),
        kv(8, "Pending", "Enabled"),
        "    ECC Errors",
        *ecc,
        "    Retired Pages",
        kv(8, "Single Bit ECC", "N/A"),
        kv(8, "Double Bit ECC", "N/A"),
        kv(8, "Pending Page Blacklist", "N/A"),
        "    Remapped Rows",
        kv(8, "Correctable Error", 0),
        kv(8, "Uncorrectable Error", 1 if remap else 0),
        kv(8, "Pending", "Yes" if remap else "No"),
        kv(8, "Remapping Failure Occurred", "No"),
        "",
    ]
    return "\n".join(out) + "\n"


def nvlink_status(c, faults):
    down = 8 if "nvlink-down" in faults else 0
    lines = [f"GPU 0: {c.GPU_NAME_LONG} (UUID: {c.UUID})"]
    for i in range(NVLINKS):
        lines.append(f"\t Link {i}: " + ("<inactive>" if i >= NVLINKS - down else "26.562 GB/s"))
    return "\n".join(lines) + "\n"
