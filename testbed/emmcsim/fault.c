// SPDX-License-Identifier: GPL-2.0
/*
 * emmcsim faults, by parameter (README.md, "Faults"). None by default.
 *
 * - fault_kind says what a faulted data command (CMD17/18/24/25, packed ones included)
 *   gets: a CRC error or a timeout, on its response (the card did not execute it) or
 *   on its data (a write is not programmed, a read's data is not delivered).
 * - fault_after = N > 0: the Nth data command from the write of the parameter faults,
 *   once; writing it again re-arms it.
 * - fault_sector / fault_sectors: every data command whose blocks touch that range
 *   faults, every time (a bad spot on the card).
 * - stop_after = N > 0: after N more requests the card answers nothing: every command
 *   of every request times out (no response, no data), until stop_after is written
 *   again (0: it answers again).
 *
 * The mmc core sees these as a real host reports them (cmd->error or data->error) and
 * does what it does with a real card: retries, status checks, a reset, and in the end
 * an I/O error for the request.
 */
#include "emmcsim.h"

/* Re-arms a countdown when its parameter was written since it was last looked at. */
static void arm(enum emmcsim_param_id id, unsigned int *seen, unsigned int *left)
{
	unsigned int writes = emmcsim_param_writes(id);

	if (writes == *seen)
		return;
	*seen = writes;
	*left = emmcsim_param(id);
}

bool emmcsim_fault_unanswered(struct emmcsim_host *h)
{
	struct emmcsim_faults *f = &h->faults;
	unsigned int writes = emmcsim_param_writes(P_STOP_AFTER);

	if (writes != f->stop_writes) {
		f->stopped = false;
		arm(P_STOP_AFTER, &f->stop_writes, &f->stop_left);
	}
	if (!f->stopped && f->stop_left && !--f->stop_left) {
		pr_info("emmcsim: the card stops answering (stop_after)\n");
		f->stopped = true;
	}
	if (f->stopped) {
		h->stats.unanswered++;
		/* the request's first command times out (sdhci: MMC_ERR_CMD_TIMEOUT) */
		emmcsim_err(h, MMC_ERR_CMD_TIMEOUT);
	}
	return f->stopped;
}

enum emmcsim_fault_kind emmcsim_fault_data(struct emmcsim_host *h, u32 sector, u32 blocks)
{
	struct emmcsim_faults *f = &h->faults;
	enum emmcsim_fault_kind kind = emmcsim_param(P_FAULT_KIND);
	u64 first = (u32)emmcsim_param(P_FAULT_SECTOR);
	u64 count = (u32)emmcsim_param(P_FAULT_SECTORS);
	bool hit = false;

	arm(P_FAULT_AFTER, &f->after_writes, &f->after_left);
	if (f->after_left && !--f->after_left)
		hit = true;
	if (count && (u64)sector < first + count && (u64)sector + blocks > first)
		hit = true;
	if (!hit || kind == FAULT_NONE)
		return FAULT_NONE;
	h->stats.faults++;
	return kind;
}
