// SPDX-License-Identifier: GPL-2.0
/*
 * emmcsim store: the card's user area as 4 KiB pages in an xarray, allocated on first
 * write (a card of 4 GiB costs only what was written). Unwritten and discarded pages
 * read as zeros. Data moves straight between the request's scatterlist and the pages.
 *
 * The copy maps the scatterlist with SG_MITER_ATOMIC: kmap_atomic() disables page faults
 * and preemption (include/linux/highmem-internal.h), on every configuration, and
 * SG_MITER_LOCAL (kmap_local_page() instead) exists only from Linux 6.15. Nothing may sleep
 * between sg_miter_next() and sg_miter_stop(), and alloc_page(GFP_NOIO) may (it enters
 * direct reclaim): a write therefore allocates all of its pages first, then maps.
 */
#include <linux/gfp.h>
#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/scatterlist.h>
#include <linux/uaccess.h>
#include <linux/xarray.h>

#include "emmcsim.h"

int emmcsim_store_init(struct emmcsim_store *s, unsigned long limit_pages)
{
	xa_init(&s->pages);
	s->nr_pages = 0;
	s->limit_pages = limit_pages;
	return 0;
}

void emmcsim_store_free(struct emmcsim_store *s)
{
	struct page *page;
	unsigned long index;

	xa_for_each(&s->pages, index, page)
		__free_page(page);
	xa_destroy(&s->pages);
	s->nr_pages = 0;
}

static struct page *emmcsim_store_page(struct emmcsim_store *s, unsigned long index,
				       bool create)
{
	struct page *page = xa_load(&s->pages, index);
	void *old;

	if (page || !create)
		return page;
	/*
	 * Never inside the copy's atomic mapping. might_sleep() would say so only with
	 * CONFIG_DEBUG_ATOMIC_SLEEP, which Debian's armmp kernels do not set (nor
	 * PREEMPT_COUNT: there preempt_disable() counts nothing); pagefault_disable(),
	 * which kmap_atomic() always calls, is counted per task on every configuration.
	 */
	if (WARN_ON_ONCE(pagefault_disabled()))
		return NULL;
	if (s->nr_pages >= s->limit_pages)
		return NULL;
	page = alloc_page(GFP_NOIO | __GFP_ZERO | __GFP_NOWARN);
	if (!page)
		return NULL;
	old = xa_store(&s->pages, index, page, GFP_NOIO | __GFP_NOWARN);
	if (xa_is_err(old)) {
		__free_page(page);
		return NULL;
	}
	s->nr_pages++;
	return page;
}

/*
 * Allocates every page of [addr, addr + len) not yet stored, before any mapping: sleeping
 * is allowed here. -ENOSPC when store_limit_mb is reached (the write then moves nothing;
 * pages allocated before the failure stay, zeroed).
 */
static int emmcsim_store_alloc(struct emmcsim_store *s, u64 addr, size_t len)
{
	unsigned long index, last;

	if (!len)
		return 0;
	last = (addr + len - 1) >> PAGE_SHIFT;
	for (index = addr >> PAGE_SHIFT; index <= last; index++)
		if (!emmcsim_store_page(s, index, true))
			return -ENOSPC;
	return 0;
}

/*
 * Walks len bytes of the sg list from skip, copying to or from the store at addr. Atomic
 * from sg_miter_next() to sg_miter_stop(): it only looks pages up (a write's are there).
 */
static int emmcsim_store_copy(struct emmcsim_store *s, u64 addr, struct scatterlist *sg,
			      unsigned int sg_len, size_t skip, size_t len, bool write)
{
	struct sg_mapping_iter miter;
	unsigned int flags = SG_MITER_ATOMIC | (write ? SG_MITER_FROM_SG : SG_MITER_TO_SG);
	int err = write ? emmcsim_store_alloc(s, addr, len) : 0;

	if (err)
		return err;
	sg_miter_start(&miter, sg, sg_len, flags);
	if (skip && !sg_miter_skip(&miter, skip)) {
		sg_miter_stop(&miter);
		return -EINVAL;
	}
	while (len && sg_miter_next(&miter)) {
		size_t chunk = min(miter.length, len);
		u8 *buf = miter.addr;

		miter.consumed = chunk;
		len -= chunk;
		while (chunk) {
			unsigned long index = addr >> PAGE_SHIFT;
			size_t off = addr & (PAGE_SIZE - 1);
			size_t n = min_t(size_t, chunk, PAGE_SIZE - off);
			struct page *page = emmcsim_store_page(s, index, false);
			void *p;

			if (write && !page) {
				err = -ENOSPC;	/* cannot happen: allocated above */
			} else if (!page) {
				memset(buf, 0, n);
			} else {
				p = kmap_local_page(page);
				if (write)
					memcpy(p + off, buf, n);
				else
					memcpy(buf, p + off, n);
				kunmap_local(p);
			}
			buf += n;
			addr += n;
			chunk -= n;
		}
	}
	sg_miter_stop(&miter);
	if (!err && len)
		err = -EINVAL;
	return err;
}

int emmcsim_store_write(struct emmcsim_store *s, u64 addr, struct scatterlist *sg,
			unsigned int sg_len, size_t skip, size_t len)
{
	return emmcsim_store_copy(s, addr, sg, sg_len, skip, len, true);
}

int emmcsim_store_read(struct emmcsim_store *s, u64 addr, struct scatterlist *sg,
		       unsigned int sg_len, size_t skip, size_t len)
{
	return emmcsim_store_copy(s, addr, sg, sg_len, skip, len, false);
}

/* Whole pages in [addr, addr + len) are freed; partial pages are zeroed. */
void emmcsim_store_discard(struct emmcsim_store *s, u64 addr, u64 len)
{
	u64 end = addr + len;

	while (addr < end) {
		unsigned long index = addr >> PAGE_SHIFT;
		size_t off = addr & (PAGE_SIZE - 1);
		size_t n = min_t(u64, end - addr, PAGE_SIZE - off);
		struct page *page = xa_load(&s->pages, index);

		if (page && n == PAGE_SIZE) {
			xa_erase(&s->pages, index);
			__free_page(page);
			s->nr_pages--;
		} else if (page) {
			memzero_page(page, off, n);
		}
		addr += n;
	}
}
