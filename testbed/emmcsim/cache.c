// SPDX-License-Identifier: GPL-2.0
/*
 * emmcsim volatile cache (README.md, "Cache"): cache_kib of write-back cache, announced
 * in EXT_CSD CACHE_SIZE and switched by CACHE_CTRL (byte 33, which the kernel sets at
 * init when CACHE_SIZE > 0). With it on, a write that is not a reliable write (CMD23
 * bit 31) goes into the cache in cache_write_ns (besides the bus) while the cache has
 * room; the cache drains to flash in the background at program_ns_per_kib, in the
 * guest's time between and during requests. A write that does not fit waits for the
 * bytes that must drain first. FLUSH_CACHE (byte 32) and turning CACHE_CTRL off wait
 * for the whole cache to drain, plus write_access_ns when anything was in it. Cached
 * writes pay neither write_access_ns per command nor the flash geometry's costs: the
 * cache merges them. The data itself is in the store at once; only the time is modelled.
 */
#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/mmc/mmc.h>

#include "emmcsim.h"

bool emmcsim_cache_on(const struct emmcsim_card *card)
{
	return emmcsim_param(P_CACHE_KIB) && (card->ext_csd[EXT_CSD_CACHE_CTRL] & 1);
}

/* What drained since the cache's clock, up to now. */
static void drain(struct emmcsim_cache *c, u64 now)
{
	u64 per_kib = emmcsim_param(P_PROGRAM_NS_PER_KIB), gone;

	if (now <= c->clock_ns)
		return;
	gone = per_kib ? div64_u64((now - c->clock_ns) * 1024, per_kib) : c->dirty;
	c->dirty = gone < c->dirty ? c->dirty - gone : 0;
	c->clock_ns = now;
}

u64 emmcsim_cache_write_ns(struct emmcsim_host *h, u64 len)
{
	struct emmcsim_cache *c = &h->card.cache;
	u64 size = (u64)emmcsim_param(P_CACHE_KIB) * 1024;
	u64 now = ktime_get_ns(), total, excess, wait;

	drain(c, now);
	total = c->dirty + len;
	excess = total > size ? total - size : 0;
	wait = emmcsim_per_kib(P_PROGRAM_NS_PER_KIB, excess);
	c->dirty = total - excess;
	/*
	 * A queued task (cqe.c) can come in while an earlier one still waits for room:
	 * the cache is then accounted up to that wait's end, and this wait follows it.
	 */
	c->clock_ns = max(now, c->clock_ns) + wait;
	h->stats.cached_writes++;
	return emmcsim_param(P_CACHE_WRITE_NS) + wait;
}

u64 emmcsim_cache_flush_ns(struct emmcsim_host *h)
{
	struct emmcsim_cache *c = &h->card.cache;
	u64 now = ktime_get_ns(), ns;

	drain(c, now);
	if (!c->dirty)
		return 0;
	ns = emmcsim_per_kib(P_PROGRAM_NS_PER_KIB, c->dirty) + emmcsim_param(P_WRITE_ACCESS_NS);
	c->dirty = 0;
	c->clock_ns = now + ns;
	h->stats.flushes++;
	return ns;
}
