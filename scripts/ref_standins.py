#!/usr/bin/env python3
"""Stand-in traces for the REF paper's three desktop benchmarks (Seo & Shin 2008, §V), written
as flashbuf text traces (`# flashbuf-trace v1`, then `R <page>` / `W <page>` lines), 2 KiB pages.

The paper's traces (Internet Explorer, MS-Office install, JPEG copy, NTFS) are not public. §V
says what they hold; each stand-in is built from those words and from how NTFS lays files out,
not from any number of the paper's results:

* IE ("generates many small-sized temporary files", "highly random write requests"):
  small files (geometric sizes, mean 4 pages = 8 KB, at most 32 pages) created by several
  concurrent downloads whose page writes interleave (so the request stream is random), placed
  by NTFS one after the other in free space (an allocation pointer sweeping a 96 MB cache
  area and wrapping, old temporary files being deleted), each creation updating its MFT record,
  a directory index page, the volume bitmap and the $LogFile; the browser re-reads recently
  cached files.
* office ("writes both small- and large-sized office files", "many random writes which are
  interposed between sequential writes"): files of 4 to 1,024 pages (log-uniform) written
  sequentially one at a time, with the same metadata updates interposed every few pages, and
  reads of the installation source (a separate region, read once).
* jpeg ("copies total 2GB of JPEG files, where each file size is 500~600KB"): files of 250 to
  300 pages read from a source region and written sequentially into the target, with the
  metadata updates interposed. `--scale` shrinks the 2 GB (default: 1/4, 512 MB).

Every choice is a constant below; none was tuned to any result. Deterministic for a seed.

Usage: ref_standins.py OUTDIR [--seed N] [--scale F]
"""

import argparse
import os
import random

PAGE = 2048
VOLUME_PAGES = 1 << 19  # 1 GiB volume of 2 KiB pages
MFT = (0, 8192)  # MFT zone: 1 KiB records, 2 per page
LOGFILE = (8192, 2048)  # $LogFile: 4 MB circular log
BITMAP = (10240, 64)  # volume bitmap: one page maps 2 KiB * 8 = 16,384 clusters
DIRS = (10304, 512)  # directory index pages
DATA0 = 16384  # first data page


class Meta:
    """NTFS metadata writes made by one file creation (or extension)."""

    def __init__(self, rng):
        self.rng = rng
        self.log = 0
        self.next_record = 0

    def create(self, out, start_page, dir_hot):
        rec = self.next_record
        self.next_record += 1
        out.append(("W", MFT[0] + (rec // 2) % MFT[1]))
        # directory index: a few hot directories (the cache folders / target folder)
        d = dir_hot[self.rng.randrange(len(dir_hot))]
        out.append(("W", DIRS[0] + d))
        out.append(("W", BITMAP[0] + (start_page // (PAGE * 8)) % BITMAP[1]))
        self.logwrite(out, 2)

    def logwrite(self, out, n):
        for _ in range(n):
            out.append(("W", LOGFILE[0] + self.log % LOGFILE[1]))
            self.log += 1


def geometric(rng, mean, cap):
    p = 1.0 / mean
    n = 1
    while rng.random() > p and n < cap:
        n += 1
    return n


def ie(rng, files):
    out = []
    meta = Meta(rng)
    area = (DATA0, 49152)  # 96 MB temporary-files area
    ptr = 0
    dir_hot = [rng.randrange(DIRS[1]) for _ in range(8)]
    recent = []  # (start, size) of recently created files, for re-reads
    active = []  # concurrent downloads: [next page, pages left]
    created = 0
    while created < files or active:
        while len(active) < 4 and created < files:
            size = geometric(rng, 4, 32)
            if ptr + size > area[1]:
                ptr = 0
            start = area[0] + ptr
            ptr += size
            meta.create(out, start, dir_hot)
            active.append([start, size])
            recent.append((start, size))
            if len(recent) > 2000:
                recent.pop(0)
            created += 1
        # one page of one download (they interleave)
        i = rng.randrange(len(active))
        out.append(("W", active[i][0]))
        active[i][0] += 1
        active[i][1] -= 1
        if active[i][1] == 0:
            active.pop(i)
            meta.logwrite(out, 1)
        if rng.random() < 0.15 and recent:
            s, n = recent[rng.randrange(len(recent))]
            for p in range(s, s + n):
                out.append(("R", p))
    return out


def office(rng, files):
    out = []
    meta = Meta(rng)
    ptr = DATA0
    src = 300000  # installation source region (read once, sequentially per file)
    dir_hot = [rng.randrange(DIRS[1]) for _ in range(32)]
    for _ in range(files):
        size = int(round(4 * (256 ** rng.random())))  # 4 .. 1,024 pages, log-uniform
        start = ptr
        ptr += size
        if ptr >= 290000:
            ptr = DATA0
        meta.create(out, start, dir_hot)
        for k in range(size):
            out.append(("R", src))
            src += 1
            if src >= VOLUME_PAGES:
                src = 300000
            out.append(("W", start + k))
            if rng.random() < 1.0 / 16:  # metadata interposed in the sequential write
                meta.logwrite(out, 1)
                if rng.random() < 0.5:
                    out.append(("W", MFT[0] + rng.randrange(meta.next_record // 2 + 1) % MFT[1]))
    return out


def jpeg(rng, total_pages):
    out = []
    meta = Meta(rng)
    ptr = DATA0
    src = 270000
    dir_hot = [rng.randrange(DIRS[1]) for _ in range(2)]
    written = 0
    while written < total_pages:
        size = rng.randint(250, 300)
        start = ptr
        ptr += size
        meta.create(out, start, dir_hot)
        for k in range(size):
            out.append(("R", src))
            src += 1
            out.append(("W", start + k))
            if rng.random() < 1.0 / 32:
                meta.logwrite(out, 1)
        # the file's MFT record is updated again when the copy closes it (size, times)
        out.append(("W", MFT[0] + ((meta.next_record - 1) // 2) % MFT[1]))
        written += size
    return out


def write(path, reqs):
    with open(path, "w") as f:
        f.write("# flashbuf-trace v1\n")
        f.write("".join(f"{k} {p}\n" for k, p in reqs))


def main():
    a = argparse.ArgumentParser()
    a.add_argument("outdir")
    a.add_argument("--seed", type=int, default=1)
    a.add_argument("--scale", type=float, default=0.25)
    args = a.parse_args()
    os.makedirs(args.outdir, exist_ok=True)
    rng = random.Random(args.seed)
    write(os.path.join(args.outdir, "ie-files.txt"), ie(rng, 40000))
    write(os.path.join(args.outdir, "office-files.txt"), office(rng, 600))
    write(os.path.join(args.outdir, "jpeg-files.txt"), jpeg(rng, int(args.scale * (1 << 20))))


if __name__ == "__main__":
    main()
