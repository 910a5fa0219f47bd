#!/usr/bin/env python3
"""The ctest cuda-kernel-symbols: every kernel name the host can ask for is
in its module's fatbin, and every kernel a fatbin holds is one the host can
ask for. Needs no GPU.

ampc-cuda-kernel-names prints the names runtime/cuda/kernels/KernelNames.def
forms ("<module> <name>" lines). For each fatbin embedded in the backend
(build/runtime/cuda/kernels/<module>.fatbin) this reads the kernel entry
symbols of its sm_90 ELF and fails, naming the module and the symbol, when
a table name is missing (a variant not built, a stem spelled differently)
or a kernel is not in the table (unreachable from the host), and when the
fatbin lacks its sm_90 ELF or its compute_90 PTX.

The fatbin is read here (its container, then the ELF's symbol table), since
cuobjdump is not part of every CUDA install; given --cuobjdump, its
--dump-elf-symbols listing is read too and must agree.
"""

import argparse
import os
import re
import struct
import subprocess
import sys
from collections import defaultdict

FATBIN_MAGIC = 0xBA55ED50
KIND_PTX, KIND_ELF = 1, 2
ARCH = 90  # sm_90 SASS and compute_90 PTX (runtime/cuda/CMakeLists.txt)

SHT_SYMTAB = 2
STT_FUNC = 2
STB_GLOBAL = 1
STO_ENTRY = 0x10  # CUDA's st_other bit for a __global__ function


def fatbin_entries(data):
    """(kind, arch, payload) for each image of a fatbin file."""
    magic, _version, header, size = struct.unpack_from("<IHHQ", data, 0)
    if magic != FATBIN_MAGIC:
        raise ValueError("not a fatbin (magic %#x)" % magic)
    out, off, end = [], header, header + size
    while off < end:
        # kind u16, version u16, header size u32, payload size u64, ...,
        # the SM version u32 at 0x1c.
        kind, _v, hsize, psize = struct.unpack_from("<HHIQ", data, off)
        (arch,) = struct.unpack_from("<I", data, off + 0x1C)
        out.append((kind, arch, data[off + hsize : off + hsize + psize]))
        off += hsize + psize
    return out


def elf_kernels(elf):
    """The names of the global entry functions (kernels) of a cubin."""
    if elf[:4] != b"\x7fELF" or elf[4] != 2:
        raise ValueError("not a 64-bit ELF (a compressed image?)")
    shoff, = struct.unpack_from("<Q", elf, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", elf, 0x3A)
    sections = [
        struct.unpack_from("<IIQQQQIIQQ", elf, shoff + i * shentsize)
        for i in range(shnum)
    ]
    names = set()
    for _name, stype, _f, _a, off, size, link, _i, _al, entsize in sections:
        if stype != SHT_SYMTAB:
            continue
        stroff = sections[link][4]
        for k in range(size // entsize):
            st_name, info, other = struct.unpack_from("<IBB", elf, off + k * entsize)
            if info & 0xF == STT_FUNC and info >> 4 == STB_GLOBAL and other & STO_ENTRY:
                stop = elf.index(b"\0", stroff + st_name)
                names.add(elf[stroff + st_name : stop].decode())
    return names


def cuobjdump_kernels(tool, path):
    """The STO_ENTRY symbols of the sm_90 ELFs, as cuobjdump lists them."""
    text = subprocess.run(
        [tool, "--dump-elf-symbols", path],
        check=True, capture_output=True, text=True).stdout
    names, arch = set(), None
    for line in text.splitlines():
        m = re.match(r"\s*arch = sm_(\d+)", line)
        if m:
            arch = int(m.group(1))
        fields = line.split()
        if arch == ARCH and len(fields) >= 4 and fields[0] == "STT_FUNC" \
                and fields[2] == "STO_ENTRY":
            names.add(fields[3])
    return names


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--names", required=True, help="ampc-cuda-kernel-names")
    ap.add_argument("--fatbins", nargs="+", required=True,
                    help="the embedded fatbins, kernels/<module>.fatbin")
    ap.add_argument("--cuobjdump", help="cross-check with cuobjdump")
    args = ap.parse_args()

    table = defaultdict(set)
    out = subprocess.run([args.names], check=True, capture_output=True,
                         text=True).stdout
    failures = []
    for line in out.splitlines():
        module, name = line.split()
        if name in table[module]:
            failures.append("%s: the table forms %s twice" % (module, name))
        table[module].add(name)

    built = {os.path.basename(p)[: -len(".fatbin")]: p for p in args.fatbins}
    for module in sorted(set(table) - set(built)):
        failures.append("%s: the table names this module, but no %s.fatbin "
                        "is built" % (module, module))

    for module, path in sorted(built.items()):
        try:
            with open(path, "rb") as f:
                entries = fatbin_entries(f.read())
            elfs = [p for k, a, p in entries if k == KIND_ELF and a == ARCH]
            if not elfs:
                failures.append("%s: %s has no sm_%d ELF" % (module, path, ARCH))
                continue
            if not any(k == KIND_PTX and a == ARCH for k, a, _ in entries):
                failures.append("%s: %s has no compute_%d PTX"
                                % (module, path, ARCH))
            kernels = set().union(*(elf_kernels(e) for e in elfs))
        except (OSError, ValueError, struct.error) as e:
            failures.append("%s: cannot read %s: %s" % (module, path, e))
            continue
        if args.cuobjdump:
            listed = cuobjdump_kernels(args.cuobjdump, path)
            if listed != kernels:
                failures.append(
                    "%s: cuobjdump lists other kernels than this reader: only "
                    "cuobjdump %s, only here %s" % (module,
                    sorted(listed - kernels), sorted(kernels - listed)))
        names = table.get(module, set())
        for name in sorted(names - kernels):
            failures.append("%s: %s is in the table but not in %s"
                            % (module, name, path))
        for name in sorted(kernels - names):
            failures.append("%s: kernel %s in %s is not in the table "
                            "(runtime/cuda/kernels/KernelNames.def)"
                            % (module, name, path))
        print("%-12s %4d kernels in its sm_%d ELF, %4d names in the table"
              % (module, len(kernels), ARCH, len(names)))

    for f in failures:
        print("FAIL " + f)
    checked = "read with cuobjdump too" if args.cuobjdump else "read here"
    print("%d modules, %d names: %s (%s)"
          % (len(built), sum(len(v) for v in table.values()),
             "ok" if not failures else "%d failures" % len(failures), checked))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
