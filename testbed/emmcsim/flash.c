// SPDX-License-Identifier: GPL-2.0
/*
 * emmcsim flash geometry: the costs that make erase blocks, pages and open allocation
 * units visible from outside the card, the way flashbench finds them on real cards.
 *
 * - A transfer (read or write) that crosses an erase-block boundary pays boundary_ns
 *   for each boundary it crosses; one that crosses a page boundary that is not an
 *   erase-block boundary pays page_boundary_ns for each. flashbench -a (mmcab probe
 *   align) sees the first as the high plateau of its diff column from the erase-block
 *   size up, the second as a lower step from the page size up.
 * - The card keeps open_aus allocation units (erase blocks) open for writing. A write
 *   into an erase block that is not open opens it; when open_aus are open already, the
 *   least recently written one is closed first, which costs gc_ns (its garbage
 *   collection: the copy that completes it). Writing round-robin into more units than
 *   the card keeps open pays gc_ns on nearly every write: flashbench --open-au (mmcab
 *   probe open-au) sees the throughput collapse.
 *
 * - A read's first page leaves the die before any of its data is on the bus: the part
 *   of the read inside the page it starts in costs first_page_ns_per_kib per KiB on top
 *   of the read's other costs. A NAND read senses a page into the die's page register
 *   (tR, in read_access_ns), then the controller clocks the bytes it needs out over the
 *   NAND interface and corrects them (ECC) before it sends the first block; the later
 *   pages are sensed and moved while the earlier ones are on the bus, which is what
 *   limits a long read. So a read shorter than a page pays only for its own bytes, a
 *   longer one for the rest of its first page: 4 KiB reads come out faster than the
 *   line through longer ones (README.md, "Presets", pinephone).
 *
 * All of it is off by default (costs 0, open_aus 0: no limit), so the default timing
 * stays the calibration of README.md. The EXT_CSD erase group (HC_ERASE_GRP_SIZE,
 * 512 KiB) does not follow erase_block_kib: on real cards it need not be the flash's
 * erase block either, and the probes must find the geometry from the timing alone.
 */
#include <linux/math64.h>
#include <linux/minmax.h>
#include <linux/string.h>

#include "emmcsim.h"

/* Boundaries of unit bytes crossed by [addr, addr + len). */
static u64 crossings(u64 addr, u64 len, u64 unit)
{
	if (!unit || !len)
		return 0;
	return div64_u64(addr + len - 1, unit) - div64_u64(addr, unit);
}

static u64 kib(enum emmcsim_param_id id)
{
	return (u64)emmcsim_param(id) * 1024;
}

u64 emmcsim_flash_boundary_ns(struct emmcsim_host *h, u64 addr, u64 len)
{
	u64 eb = kib(P_ERASE_BLOCK_KIB), page = kib(P_PAGE_KIB);
	u64 eb_x, page_x, ns;

	/* Both powers of two (params.c): every erase-block boundary is a page boundary. */
	if (eb && page > eb)
		page = eb;
	eb_x = crossings(addr, len, eb);
	page_x = crossings(addr, len, page);
	page_x = page_x > eb_x ? page_x - eb_x : 0;
	h->stats.erase_block_crossings += eb_x;
	h->stats.page_crossings += page_x;
	ns = eb_x * (u64)emmcsim_param(P_BOUNDARY_NS);
	return ns + page_x * (u64)emmcsim_param(P_PAGE_BOUNDARY_NS);
}

u64 emmcsim_flash_first_page_ns(u64 addr, u64 len)
{
	u64 page = kib(P_PAGE_KIB), part = len;

	/* page is a power of two (params.c); without pages the whole read is one. */
	if (page)
		part = min(len, page - (addr & (page - 1)));
	return emmcsim_per_kib(P_FIRST_PAGE_NS_PER_KIB, part);
}

/* A write into erase block au: 0, or gc_ns when it closes another unit. */
static u64 open_au(struct emmcsim_host *h, struct emmcsim_open_aus *o, u64 au)
{
	unsigned int i, lru = 0;

	o->clock++;
	for (i = 0; i < o->n; i++) {
		if (o->au[i] == au) {
			o->used[i] = o->clock;
			return 0;
		}
		if (o->used[i] < o->used[lru])
			lru = i;
	}
	if (o->n < o->limit) {
		o->au[o->n] = au;
		o->used[o->n++] = o->clock;
		return 0;
	}
	o->au[lru] = au;
	o->used[lru] = o->clock;
	h->stats.au_gcs++;
	return emmcsim_param(P_GC_NS);
}

u64 emmcsim_flash_write_ns(struct emmcsim_host *h, u64 addr, u64 len)
{
	struct emmcsim_open_aus *o = &h->card.open_aus;
	unsigned int limit = emmcsim_param(P_OPEN_AUS);
	u64 eb = kib(P_ERASE_BLOCK_KIB), au, last, ns;

	ns = emmcsim_flash_boundary_ns(h, addr, len);
	if (!limit || !eb || !len)
		return ns;
	if (o->erase_block != eb || o->limit != limit) {
		memset(o, 0, sizeof(*o));
		o->erase_block = eb;
		o->limit = limit;
	}
	last = div64_u64(addr + len - 1, eb);
	for (au = div64_u64(addr, eb); au <= last; au++)
		ns += open_au(h, o, au);
	return ns;
}
