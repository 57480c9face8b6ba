// SPDX-License-Identifier: GPL-2.0
/*
 * emmcsim speed modes (README.md, "Speed modes"): what the card offers in EXT_CSD
 * (CARD_TYPE, DRIVER_STRENGTH, STROBE_SUPPORT) and what the host comes up with (caps,
 * caps2, f_max), each from its own parameters, so that a test can give the card a mode
 * its host lacks and the reverse; the card's checks of CMD6 to HS_TIMING and BUS_WIDTH;
 * CMD21's tuning block; and the host's ->execute_tuning, a sweep of CMD21s sent with the
 * core's mmc_send_tuning() as a controller sweeping its sampling taps would.
 *
 * The timing model follows the host's ios (card.c): the clock, the width and, from the
 * timing, SDR or DDR. The card's own HS_TIMING decides only what it accepts (CMD21 in
 * HS200 only), as on a real card.
 */
#include <linux/kernel.h>
#include <linux/mmc/host.h>
#include <linux/mmc/mmc.h>
#include <linux/scatterlist.h>

#include "emmcsim.h"

/*
 * The tuning blocks, byte for byte tuning_blk_pattern_4bit and tuning_blk_pattern_8bit
 * of drivers/mmc/core/mmc_ops.c (Linux 6.12 and 7.2): mmc_send_tuning() compares what
 * the card sends with them. They are static there, so the card has its own copy.
 */
static const u8 tuning_blk_4bit[64] = {
	0xff, 0x0f, 0xff, 0x00, 0xff, 0xcc, 0xc3, 0xcc,
	0xc3, 0x3c, 0xcc, 0xff, 0xfe, 0xff, 0xfe, 0xef,
	0xff, 0xdf, 0xff, 0xdd, 0xff, 0xfb, 0xff, 0xfb,
	0xbf, 0xff, 0x7f, 0xff, 0x77, 0xf7, 0xbd, 0xef,
	0xff, 0xf0, 0xff, 0xf0, 0x0f, 0xfc, 0xcc, 0x3c,
	0xcc, 0x33, 0xcc, 0xcf, 0xff, 0xef, 0xff, 0xee,
	0xff, 0xfd, 0xff, 0xfd, 0xdf, 0xff, 0xbf, 0xff,
	0xbb, 0xff, 0xf7, 0xff, 0xf7, 0x7f, 0x7b, 0xde,
};

static const u8 tuning_blk_8bit[128] = {
	0xff, 0xff, 0x00, 0xff, 0xff, 0xff, 0x00, 0x00,
	0xff, 0xff, 0xcc, 0xcc, 0xcc, 0x33, 0xcc, 0xcc,
	0xcc, 0x33, 0x33, 0xcc, 0xcc, 0xcc, 0xff, 0xff,
	0xff, 0xee, 0xff, 0xff, 0xff, 0xee, 0xee, 0xff,
	0xff, 0xff, 0xdd, 0xff, 0xff, 0xff, 0xdd, 0xdd,
	0xff, 0xff, 0xff, 0xbb, 0xff, 0xff, 0xff, 0xbb,
	0xbb, 0xff, 0xff, 0xff, 0x77, 0xff, 0xff, 0xff,
	0x77, 0x77, 0xff, 0x77, 0xbb, 0xdd, 0xee, 0xff,
	0xff, 0xff, 0xff, 0x00, 0xff, 0xff, 0xff, 0x00,
	0x00, 0xff, 0xff, 0xcc, 0xcc, 0xcc, 0x33, 0xcc,
	0xcc, 0xcc, 0x33, 0x33, 0xcc, 0xcc, 0xcc, 0xff,
	0xff, 0xff, 0xee, 0xff, 0xff, 0xff, 0xee, 0xee,
	0xff, 0xff, 0xff, 0xdd, 0xff, 0xff, 0xff, 0xdd,
	0xdd, 0xff, 0xff, 0xff, 0xbb, 0xff, 0xff, 0xff,
	0xbb, 0xbb, 0xff, 0xff, 0xff, 0x77, 0xff, 0xff,
	0xff, 0x77, 0x77, 0xff, 0x77, 0xbb, 0xdd, 0xee,
};

/* EXT_CSD CARD_TYPE [196] from the card's parameters; hs200=1 is card_hs200=1. */
u8 emmcsim_card_type(void)
{
	u8 type = 0;

	if (emmcsim_param(P_CARD_HS))
		type |= EXT_CSD_CARD_TYPE_HS_26 | EXT_CSD_CARD_TYPE_HS_52;
	if (emmcsim_param(P_CARD_DDR52))
		type |= EXT_CSD_CARD_TYPE_DDR_1_8V;	/* DDR52 at 1.8 V or 3 V */
	if (emmcsim_param(P_CARD_HS200) || emmcsim_param(P_HS200))
		type |= EXT_CSD_CARD_TYPE_HS200_1_8V;
	if (emmcsim_param(P_CARD_HS400))
		type |= EXT_CSD_CARD_TYPE_HS400_1_8V;
	return type;
}

/*
 * The host's speed caps from its parameters (hs200=1 is host_hs200=1), and f_max: 200 MHz
 * when the card or the host offers a 200 MHz mode, so that a mode switched on later in
 * debugfs caps2 can reach its clock; 52 MHz otherwise, as the HS52 card always had.
 */
void emmcsim_speed_host_init(struct mmc_host *mmc)
{
	int ddr = emmcsim_param(P_HOST_DDR);

	if (emmcsim_param(P_HOST_HS))
		mmc->caps |= MMC_CAP_MMC_HIGHSPEED;
	if (ddr & 1)
		mmc->caps |= MMC_CAP_1_8V_DDR;
	if (ddr & 2)
		mmc->caps |= MMC_CAP_3_3V_DDR;
	if (emmcsim_param(P_HOST_HS200) || emmcsim_param(P_HS200))
		mmc->caps2 |= MMC_CAP2_HS200_1_8V_SDR;
	if (emmcsim_param(P_HOST_HS400))
		mmc->caps2 |= MMC_CAP2_HS400_1_8V;
	if (emmcsim_param(P_HOST_HS400ES))
		mmc->caps2 |= MMC_CAP2_HS400_ES;
	mmc->f_max = 52000000;
	if ((mmc->caps2 & (MMC_CAP2_HS200 | MMC_CAP2_HS400)) ||
	    (emmcsim_card_type() & (EXT_CSD_CARD_TYPE_HS200 | EXT_CSD_CARD_TYPE_HS400)))
		mmc->f_max = 200000000;
}

/*
 * BUS_WIDTH [183]: 0/1/2 SDR 1, 4, 8 lines; 5/6 DDR 4, 8 lines (DDR52, and 6 for
 * HS400), only in HS timing or HS400 (JESD84-B51 6.6.2.2, 6.6.2.3); bit 7 the
 * enhanced strobe, with 6 and STROBE_SUPPORT.
 */
static bool bus_width_ok(const struct emmcsim_card *card, u8 value)
{
	u8 timing = card->ext_csd[EXT_CSD_HS_TIMING] & 0x0f;
	u8 type = card->ext_csd[EXT_CSD_CARD_TYPE];
	u8 width = value & 0x7f;

	if (value & EXT_CSD_BUS_WIDTH_STROBE &&
	    (width != EXT_CSD_DDR_BUS_WIDTH_8 || !card->ext_csd[EXT_CSD_STROBE_SUPPORT]))
		return false;
	switch (width) {
	case EXT_CSD_BUS_WIDTH_1:
	case EXT_CSD_BUS_WIDTH_4:
	case EXT_CSD_BUS_WIDTH_8:
		return true;
	case EXT_CSD_DDR_BUS_WIDTH_4:
		return type & EXT_CSD_CARD_TYPE_DDR_1_8V && timing == EXT_CSD_TIMING_HS;
	case EXT_CSD_DDR_BUS_WIDTH_8:
		return type & (EXT_CSD_CARD_TYPE_DDR_1_8V | EXT_CSD_CARD_TYPE_HS400_1_8V) &&
			(timing == EXT_CSD_TIMING_HS || timing == EXT_CSD_TIMING_HS400);
	}
	return false;
}

/*
 * HS_TIMING [185]: the timing in bits 3:0 (0 backwards compatible, 1 HS, 2 HS200, 3
 * HS400), the driver type in bits 7:4, one DRIVER_STRENGTH [197] has. HS200 on an SDR
 * bus of 4 or 8 lines, HS400 on the 8-line DDR bus (JESD84-B51 6.6.2.3).
 */
static bool hs_timing_ok(const struct emmcsim_card *card, u8 value)
{
	u8 width = card->ext_csd[EXT_CSD_BUS_WIDTH] & 0x7f;
	u8 type = card->ext_csd[EXT_CSD_CARD_TYPE];
	u8 timing = value & 0x0f;

	if (!(card->ext_csd[EXT_CSD_DRIVER_STRENGTH] & BIT(value >> 4)))
		return false;
	switch (timing) {
	case 0:
		return true;
	case EXT_CSD_TIMING_HS:
		return type & EXT_CSD_CARD_TYPE_HS;
	case EXT_CSD_TIMING_HS200:
		return type & EXT_CSD_CARD_TYPE_HS200_1_8V &&
			(width == EXT_CSD_BUS_WIDTH_4 || width == EXT_CSD_BUS_WIDTH_8);
	case EXT_CSD_TIMING_HS400:
		return type & EXT_CSD_CARD_TYPE_HS400_1_8V && width == EXT_CSD_DDR_BUS_WIDTH_8;
	}
	return false;
}

/* CMD6 to BUS_WIDTH or HS_TIMING: whether the card takes the new value. */
bool emmcsim_speed_switch_ok(struct emmcsim_host *h, u8 index, u8 value)
{
	int fail = emmcsim_param(P_FAIL_SWITCH_TIMING);

	if (index == EXT_CSD_BUS_WIDTH)
		return bus_width_ok(&h->card, value);
	if (fail && (value & 0x0f) == fail) {
		h->stats.faults++;
		return false;	/* fail_switch_timing: SWITCH_ERROR, as a refusal */
	}
	return hs_timing_ok(&h->card, value);
}

/*
 * The tuning block into data, 128 bytes on 8 lines (wide), 64 on 4: an eMMC's CMD21, an
 * SD card's CMD19 (sd.c). With fail_tuning the card's block comes out wrong (as at a bad
 * sampling tap), so mmc_send_tuning() finds a mismatch (-EIO) at every tap. Returns the
 * data's time.
 */
u64 emmcsim_tuning_send(struct emmcsim_host *h, struct mmc_data *data, bool wide)
{
	const u8 *block = wide ? tuning_blk_8bit : tuning_blk_4bit;
	size_t size = wide ? sizeof(tuning_blk_8bit) : sizeof(tuning_blk_4bit);
	u8 buf[sizeof(tuning_blk_8bit)];

	h->stats.tuning_cmds++;
	if (!data || data->blksz * data->blocks != size) {
		if (data)	/* the host sampled a block of another size: a CRC error */
			data->error = -EILSEQ;
		return data ? emmcsim_bus_ns(&h->bus, size, 1) : 0;
	}
	memcpy(buf, block, size);
	if (emmcsim_param(P_FAIL_TUNING))
		buf[size / 2] ^= 0x01;
	sg_copy_from_buffer(data->sg, data->sg_len, buf, size);
	data->bytes_xfered = size;
	return emmcsim_bus_ns(&h->bus, size, 1);
}

/* CMD21 SEND_TUNING_BLOCK: legal in HS200 only; the block of the card's bus width. */
u64 emmcsim_tuning_block(struct emmcsim_host *h, struct mmc_command *cmd,
			 struct mmc_data *data)
{
	u8 width = h->card.ext_csd[EXT_CSD_BUS_WIDTH] & 0x7f;

	return emmcsim_tuning_send(h, data, width == EXT_CSD_BUS_WIDTH_8);
}

/*
 * ->execute_tuning: a sweep of tuning_cmds sampling points, one CMD21 each through the
 * core's mmc_send_tuning() (each a request the model times), as sdhci's own tuning
 * loop sends up to MAX_TUNING_LOOP (40) of them (drivers/mmc/host/sdhci.c). tuning_ns,
 * the host's own time per tuning, is added to the first CMD21. The tuning succeeds when
 * some point read the block right; when none did it fails with -EIO, which the core
 * counts as MMC_ERR_TUNING itself (mmc_execute_tuning(), drivers/mmc/core/core.c).
 */
int emmcsim_execute_tuning(struct mmc_host *mmc, u32 opcode)
{
	struct emmcsim_host *h = mmc_priv(mmc);
	int i, n = emmcsim_param(P_TUNING_CMDS), good = 0;

	mutex_lock(&h->lock);
	h->stats.tunings++;
	h->extra_ns += emmcsim_param(P_TUNING_NS);
	mutex_unlock(&h->lock);
	for (i = 0; i < n; i++)
		if (!mmc_send_tuning(mmc, opcode, NULL))
			good++;
	if (good)
		return 0;
	mutex_lock(&h->lock);
	h->stats.tuning_failures++;
	mutex_unlock(&h->lock);
	return -EIO;
}
