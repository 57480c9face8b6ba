#!/usr/bin/env python3
"""Transcription of the published numbers in the three seed posts into CSV.

Every value below is copied from the post named in `source`; units as published,
except where `notes` says a unit was converted (flashbench ms -> us, K/s -> MB/s).
Regenerate the CSVs (then the reports with `mmcab report <csv>`):
    python3 results/reference/transcribe.py results/reference
"""
import csv, os, sys

COLS = ["source", "post_date", "device", "conditions", "config", "workload", "direction",
        "block_size_bytes", "sweep", "metric", "unit", "higher_is_better", "headline",
        "value", "notes"]
OUT = sys.argv[1] if len(sys.argv) > 1 else "."


def write(name, rows):
    with open(os.path.join(OUT, name), "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=COLS, lineterminator="\n")
        w.writeheader()
        for r in rows:
            w.writerow(r)


# 1. linux-mmc, 2012: packed commands (Maya Erez, Qualcomm Innovation Center).
SRC = ("Maya Erez, Re: [PATCH v5 2/2] mmc: core: Support packed command for eMMC4.5 "
       "device, linux-mmc/linux-kernel, Message-ID "
       "<6669559e86c1d13b27e941ff2acf89d2.squirrel@www.codeaurora.org>")
DEV = "eMMC 4.5 device (model, host and kernel not published)"
COND = "packed command patch v5; one run per value; throughput in MB/s as published"
CFG = {"np": "no-packing", "rw": "packed", "r": "read-packing-only"}
packing = []


def pk(date, cfg, workload, direction, metric, unit, value, notes):
    packing.append(dict(source=SRC, post_date=date, device=DEV, conditions=COND,
                        config=CFG[cfg], workload=workload, direction=direction,
                        block_size_bytes="", sweep="", metric=metric, unit=unit,
                        higher_is_better="true", headline="true", value=value,
                        notes=notes))


WRITE = [("long write", 15.8, 23.3, ""),
         ("parallel writes", 17.1, 25, "sum of all write throughputs"),
         ("long rd + long wr", 12.2, 16.3, "parallel long read and long write: write throughput"),
         ("short rd + long wr", 15.4, 16.4, "parallel short read and long write: write throughput"),
         ("par. short rd+wr", 12.5, 15.5, "several parallel short reads and short writes: sum of write throughputs")]
for w, a, b, n in WRITE:
    pk("2012-03-02", "np", w, "write", "mb_per_s", "MB/s", a, n)
    pk("2012-03-02", "rw", w, "write", "mb_per_s", "MB/s", b, n)
QUOTED = "earlier mail quoted in the 2012-03-02 reply (date not shown)"
READ = [("long read", 39.5, 39.5, 39.5, ""),
        ("parallel reads", 42.6, 38, 38.2, "sum of all read throughputs"),
        ("long rd + long wr", 23.8, 12.6, 12.5, "parallel long read and long write: read throughput"),
        ("short rd + long wr", 22.9, 8.4, 8.6, "parallel short read and long write: read throughput"),
        ("par. short rd+wr", 41.6, 35, 36, "several parallel short reads and short writes: sum of read throughputs")]
for w, a, b, c, n in READ:
    for cfg, v in (("np", a), ("rw", b), ("r", c)):
        pk("2012-03-01 or earlier", cfg, w, "read", "mb_per_s", "MB/s", v,
           (n + "; " if n else "") + QUOTED)
IOZONE = [("iozone 100M rand", 4675, 729, 4557, 723),
          ("iozone 256M rand", 4632, 744, 4498, 742)]
for w, rr_np, rw_np, rr_p, rw_p in IOZONE:
    n = "IOZONE random read/random write, IOPS as published (file size in the name)"
    pk("2012-03-02", "np", w, "read", "iops", "IOPS", rr_np, n)
    pk("2012-03-02", "rw", w, "read", "iops", "IOPS", rr_p, n)
    pk("2012-03-02", "np", w, "write", "iops", "IOPS", rw_np, n)
    pk("2012-03-02", "rw", w, "write", "iops", "IOPS", rw_p, n)
write("packing-2012-linux-mmc.csv", packing)

# 2. BeagleBone Black (alpha), 2013: 4-bit vs 8-bit bus, flashbench (Andrew Bradford).
SRC = ("Andrew Bradford, Flashbench results for Micron MTFC2GMVEA-0M WT 2GB eMMC, "
       "beagle-alpha / flashbench-results@lists.linaro.org")
DEV = ("Micron MTFC2GMVEA-0M WT 2GB eMMC (manfid 0x0000fe, oemid 0x014e, name MMC02G, "
       "serial 0x1158f146, date 07/2012, 1920991232 bytes) on BeagleBone (omap_hsmmc)")
COND = ("52 MHz, mmc high-speed timing, vdd 7 (1.65-1.95 V); erase_size 524288, "
        "preferred_erase_size 4194304; kernel not published")
bb = []


def b(date, cfg, workload, direction, metric, unit, hib, headline, value, notes,
      bs="", sweep=""):
    bb.append(dict(source=SRC, post_date=date, device=DEV, conditions=COND, config=cfg,
                   workload=workload, direction=direction, block_size_bytes=bs,
                   sweep=sweep, metric=metric, unit=unit,
                   higher_is_better="true" if hib else "false",
                   headline="true" if headline else "false", value=value, notes=notes))


DD = "dd bs=1M count=256 (268435456 bytes), oflag/iflag=direct, on /dev/mmcblk1"
for cfg, date, ws, wmb, rs, rmb in (("4-bit", "2013-01-31", 46.5893, 5.8, 15.1334, 17.7),
                                    ("8-bit", "2013-02-01", 47.8116, 5.6, 11.9116, 22.5)):
    b(date, cfg, "dd 1M direct", "write", "mb_per_s", "MB/s", True, True, wmb, DD)
    b(date, cfg, "dd 1M direct", "write", "seconds", "s", False, False, ws, DD)
    b(date, cfg, "dd 1M direct", "read", "mb_per_s", "MB/s", True, True, rmb, DD)
    b(date, cfg, "dd 1M direct", "read", "seconds", "s", False, False, rs, DD)
ALIGN = "flashbench -a --blocksize=1024 --count=100 (4-bit bus); ms converted to us"
# align offset, pre, on, post, diff (as published: ms or us)
A = [(536870912, "1.03ms", "1.48ms", "1.03ms", "451us"),
     (268435456, "1ms", "1.41ms", "1.01ms", "403us"),
     (134217728, "978us", "1.44ms", "918us", "488us"),
     (67108864, "932us", "1.26ms", "782us", "407us"),
     (33554432, "981us", "1.35ms", "923us", "393us"),
     (16777216, "988us", "1.43ms", "992us", "442us"),
     (8388608, "993us", "1.44ms", "989us", "446us"),
     (4194304, "904us", "1.22ms", "740us", "398us"),
     (2097152, "992us", "1.44ms", "984us", "448us"),
     (1048576, "989us", "1.05ms", "991us", "57.4us"),
     (524288, "989us", "1.05ms", "992us", "62.4us"),
     (262144, "743us", "801us", "746us", "56.4us"),
     (131072, "986us", "1.05ms", "992us", "59us"),
     (65536, "983us", "1.04ms", "987us", "54.7us"),
     (32768, "982us", "1.04ms", "985us", "58.6us"),
     (16384, "953us", "1ms", "937us", "55.3us"),
     (8192, "742us", "794us", "738us", "54us"),
     (4096, "979us", "1.04ms", "985us", "57.5us"),
     (2048, "982us", "1.02ms", "982us", "41.3us")]


def us(text):
    return round(float(text[:-2]) * 1000, 3) if text.endswith("ms") else float(text[:-2])


def size(n):
    for unit, s in (("G", 30), ("M", 20), ("k", 10)):
        if n >= 1 << s and n % (1 << s) == 0:
            return f"{n >> s}{unit}"
    return str(n)


for off, pre, on, post, diff in A:
    w = f"align {size(off)}"
    for metric, v, head in (("align_pre_us", pre, False), ("align_on_us", on, False),
                            ("align_post_us", post, False), ("align_diff_us", diff, True)):
        b("2013-01-31", "4-bit", w, "read", metric, "us", False, head, us(v), ALIGN,
          off, "flashbench -a")
OPEN_AU = ("flashbench --open-au --erasesize=2MiB --blocksize=8KiB (4-bit bus; 8-bit "
           "'looks the same', not published); M/s = 10^6 B/s, K/s converted /1000")
AU = [("nr=1", [2.52, 2.47, 2.52, 2.49, 2.48, 2.49, 2.34, 2.13, 1.82]),
      ("nr=5", [4.49, 3.84, 4.42, 4.34, 4.23, 4.14, 3.34, 1.22, 0.927]),
      ("nr=6", [5.66, 3.33, 1.27, 0.598]),
      ("nr=5 rand", [6.16, 1.6, 2.48, 2.51, 1.64, 1.27, 1.07, 1.21, 0.886]),
      ("nr=6 rand", [5.37, 3.35, 1.28, 0.601, 0.295])]
for cfg, values in AU:
    for i, v in enumerate(values):
        bs = (2 << 20) >> i
        note = OPEN_AU
        if len(values) < 9:
            note += "; interrupted (^C) after the last size shown"
        b("2013-01-31", cfg, f"open-au {size(bs)}", "write", "mb_per_s", "MB/s", True,
          True, v, note, bs, "flashbench open-au")
write("beaglebone-2013-bus-width.csv", bb)

# 3. PinePhone, 2021-03-17: io_uring random reads, IOPS and KiB/s per block size and QD.
SRC = "PinePhone eMMC measurements, blog post 2021-03-17 (io_uring random read tool)"
COND = "random reads, io_uring, fixed queue depth (QD); one run per value; kernel not published"
PHONES = [
    ("PP1", "early dev sample", "eMMC date=07/2019 manfid=0x0000da oemid=0x0101",
     "32GiB Sandisk Ultra A1 08/2019",
     [(4096, 1, 5188, 20752), (4096, 32, 5809, 23236), (16384, 1, 1069, 17104),
      (65536, 1, 733, 46912), (262144, 1, 279, 71424), (1048576, 1, 79, 80896)],
     [(4096, 1, 2873, 11492), (16384, 1, 1170, 18720), (65536, 1, 345, 22080),
      (262144, 1, 90, 23040)]),
    ("PP2", "UBports edition", "eMMC date=07/2019 manfid=0x0000e1 oemid=0x0116",
     "32GiB Sandisk Ultra A1 08/2019",
     [(4096, 1, 4202, 16808), (4096, 32, 3808, 15232), (16384, 1, 2180, 34880),
      (65536, 1, 953, 60992), (262144, 1, 298, 76288), (1048576, 1, 79, 80896)],
     [(4096, 1, 1836, 7344), (16384, 1, 968, 15488), (65536, 1, 325, 20800),
      (262144, 1, 89, 22784)]),
    ("PP3", "fixed USB-C UBports edition", "eMMC date=07/2019 manfid=0x0000e1 oemid=0x0116",
     "32GiB Sandisk Ultra A1 09/2018",
     [(4096, 1, 4770, 19080), (16384, 1, 2529, 40464), (65536, 1, 991, 63424),
      (262144, 1, 300, 76800), (1048576, 1, 79, 80896)],
     [(4096, 1, 2002, 8008), (16384, 1, 996, 15936), (65536, 1, 329, 21056),
      (262144, 1, 89, 22784)]),
    ("PP4", "3GiB UBports edition", "eMMC date=12/2019 manfid=0x000045 oemid=0x0100",
     "32GiB Sandisk Ultra A1 10/2019",
     [(4096, 1, 1996, 7984), (16384, 1, 859, 13744), (65536, 1, 336, 21504),
      (262144, 1, 191, 48896), (1048576, 1, 60, 61440)],
     [(4096, 1, 2350, 9400), (16384, 1, 1072, 17152), (65536, 1, 338, 21632),
      (262144, 1, 90, 23040)]),
]
pp = []
for phone, edition, emmc, usd, emmc_rows, usd_rows in PHONES:
    for media, dev, rows in (("eMMC", emmc, emmc_rows), ("uSD", usd, usd_rows)):
        for bs, qd, iops, kib_s in rows:
            for metric, unit, v in (("iops", "IOPS", iops), ("kib_per_s", "KiB/s", kib_s)):
                pp.append(dict(source=SRC, post_date="2021-03-17",
                               device=f"Pinephone {phone[-1]} ({edition}) {media}: {dev}",
                               conditions=COND, config=f"{phone} {media}",
                               workload=f"{size(bs)} QD{qd}", direction="read",
                               block_size_bytes=bs, sweep="randread QD1" if qd == 1 else "",
                               metric=metric, unit=unit, higher_is_better="true",
                               headline="true", value=v, notes=""))
pp.append(dict(source=SRC, post_date="2021-03-17",
               device="Samsung 980 PRO 500GB NVMe SSD (desktop, for scale)",
               conditions=COND, config="980 PRO NVMe", workload="4k QD?",
               direction="read", block_size_bytes=4096, sweep="", metric="iops",
               unit="IOPS", higher_is_better="true", headline="false", value=640000,
               notes="'maxes out at 640k random read 4KiB IOPS' (QD not stated)"))
write("pinephone-2021-randread.csv", pp)
