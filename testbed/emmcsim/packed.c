// SPDX-License-Identifier: GPL-2.0
/*
 * emmcsim packed commands (JESD84-B451 6.6.29, README.md "Packed commands"): the header
 * block of a packed CMD25 (CMD23 bit 30), its write entries each at its own address,
 * a packed read's header and the CMD18 that reads its entries, and PACKED_COMMAND_STATUS
 * / PACKED_FAILURE_INDEX with the exception event when an entry fails.
 */
#include <linux/kernel.h>
#include <linux/mmc/mmc.h>
#include <linux/scatterlist.h>
#include <linux/string.h>

#include "emmcsim.h"

#define SECTOR		512

static void packed_status(struct emmcsim_card *card, u8 status, u8 index)
{
	card->ext_csd[EXT_CSD_PACKED_CMD_STATUS] = status;
	card->ext_csd[EXT_CSD_PACKED_FAILURE_INDEX] = index;
	if (status) {
		card->ext_csd[EXT_CSD_EXP_EVENTS_STATUS] |= PACKED_FAILURE_EVENT;
		card->pending |= R1_ERROR;
	}
}

/* Reads the header and its entries; 0, or the generic packed error. */
static int packed_header(struct emmcsim_card *card, struct mmc_data *data, u8 *rw,
			 unsigned int *n, struct emmcsim_packed_entry *e)
{
	__le32 hdr[SECTOR / 4];
	unsigned int i, max;
	u32 w0;

	if (sg_pcopy_to_buffer(data->sg, data->sg_len, hdr, SECTOR, 0) != SECTOR)
		return -EINVAL;
	w0 = le32_to_cpu(hdr[0]);
	*rw = (w0 >> 8) & 0xff;
	*n = (w0 >> 16) & 0xff;
	max = *rw == PACKED_HDR_WRITE ? card->ext_csd[500] : card->ext_csd[501];
	if ((w0 & 0xff) != PACKED_HDR_VERSION ||
	    (*rw != PACKED_HDR_WRITE && *rw != PACKED_HDR_READ) || !*n || *n > max)
		return -EINVAL;
	for (i = 0; i < *n; i++) {
		e[i].blocks = le32_to_cpu(hdr[2 * (i + 1)]) & 0xffff;
		e[i].addr = le32_to_cpu(hdr[2 * (i + 1) + 1]);
		if (!e[i].blocks || !emmcsim_card_range_ok(card, e[i].addr, e[i].blocks))
			return -EINVAL;
	}
	return 0;
}

u64 emmcsim_packed_write(struct emmcsim_host *h, struct mmc_data *data, u32 count)
{
	struct emmcsim_card *card = &h->card;
	struct emmcsim_packed_entry e[EMMCSIM_MAX_PACKED];
	unsigned int n, i, blocks = 0, fail = emmcsim_param(P_FAIL_PACKED_ENTRY);
	u64 ns = emmcsim_param(P_WRITE_ACCESS_NS);
	size_t skip = SECTOR;
	u8 rw;

	if (packed_header(card, data, &rw, &n, e)) {
		packed_status(card, PACKED_GENERIC_ERROR, 0);
		return ns;
	}
	if (rw == PACKED_HDR_READ) {
		/* The header of a packed read: the CMD18 that follows reads the entries. */
		if (count != 1) {
			packed_status(card, PACKED_GENERIC_ERROR, 0);
			return ns;
		}
		memcpy(card->packed_read, e, n * sizeof(*e));
		card->packed_read_n = n;
		packed_status(card, 0, 0);
		return emmcsim_param(P_CMD_NS);
	}
	for (i = 0; i < n; i++)
		blocks += e[i].blocks;
	if (blocks + 1 != count) {
		packed_status(card, PACKED_GENERIC_ERROR, 0);
		return ns;
	}
	h->stats.packed_writes++;
	for (i = 0; i < n; i++) {
		size_t len = (size_t)e[i].blocks * SECTOR;

		if (i + 1 == fail ||
		    emmcsim_store_write(&card->store, (u64)e[i].addr * SECTOR, data->sg,
					data->sg_len, skip, len)) {
			h->stats.packed_failures++;
			packed_status(card, PACKED_GENERIC_ERROR | PACKED_INDEXED_ERROR, i + 1);
			break;
		}
		h->stats.packed_write_entries++;
		ns += emmcsim_param(P_PACKED_ENTRY_NS) + emmcsim_per_kib(P_PROGRAM_NS_PER_KIB, len);
		ns += emmcsim_flash_write_ns(h, (u64)e[i].addr * SECTOR, len);
		skip += len;
	}
	if (i == n)
		packed_status(card, 0, 0);
	h->stats.write_blocks += blocks;
	return ns;
}

u64 emmcsim_packed_read(struct emmcsim_host *h, struct mmc_data *data, u32 count)
{
	struct emmcsim_card *card = &h->card;
	unsigned int i, n = card->packed_read_n, blocks = 0;
	u64 ns = emmcsim_param(P_READ_ACCESS_NS);
	size_t skip = 0;

	card->packed_read_n = 0;
	for (i = 0; i < n; i++)
		blocks += card->packed_read[i].blocks;
	if (!n || blocks != count || blocks != data->blocks) {
		packed_status(card, PACKED_GENERIC_ERROR, 0);
		data->error = -EIO;
		return ns;
	}
	h->stats.packed_reads++;
	for (i = 0; i < n; i++) {
		size_t len = (size_t)card->packed_read[i].blocks * SECTOR;

		emmcsim_store_read(&card->store, (u64)card->packed_read[i].addr * SECTOR,
				   data->sg, data->sg_len, skip, len);
		ns += emmcsim_param(P_PACKED_ENTRY_NS) + emmcsim_per_kib(P_READ_NS_PER_KIB, len);
		ns += emmcsim_flash_first_page_ns((u64)card->packed_read[i].addr * SECTOR, len);
		ns += emmcsim_flash_boundary_ns(h, (u64)card->packed_read[i].addr * SECTOR, len);
		skip += len;
		h->stats.packed_read_entries++;
	}
	packed_status(card, 0, 0);
	h->stats.read_blocks += blocks;
	return ns;
}
