// SPDX-License-Identifier: GPL-2.0
/*
 * emmcsim card: the command state machine of an eMMC 5.1 (JESD84-B51) as the Linux mmc
 * core drives it, reads and writes against the store, erase, and the time each command
 * takes in the timing model (README.md, "Timing model"); packed commands are in packed.c.
 *
 * Busy is part of the command that causes it: an R1b command, a write's programming,
 * complete only when the card would release DAT0 (the host has
 * MMC_CAP_WAIT_WHILE_BUSY), so the CMD13 after a write finds the card in TRAN.
 */
#include <linux/kernel.h>
#include <linux/math64.h>
#include <linux/mmc/mmc.h>
#include <linux/scatterlist.h>
#include <linux/string.h>

#include "emmcsim.h"

#define SECTOR		512
#define OCR_READY	BIT(31)
#define OCR_SECTOR_MODE	BIT(30)
/* 2.7-3.6 V and 1.70-1.95 V (JESD84-B51 table 54), sector mode */
#define SIM_OCR		(OCR_SECTOR_MODE | 0x00ff8080)

/* --- timing --- */

static unsigned int bus_clock(const struct emmcsim_bus *bus)
{
	return bus->clock ? bus->clock : 400000;
}

/* A command: its bits on the CMD line (48, and 48 or 136 back) plus cmd_ns. */
u64 emmcsim_cmd_ns(const struct emmcsim_bus *bus, unsigned int resp_bits)
{
	return emmcsim_param(P_CMD_NS) +
		div_u64((u64)(48 + resp_bits) * NSEC_PER_SEC, bus_clock(bus));
}

/*
 * DDR52 and HS400 (and an SD card's DDR50) move two bits per clock on each data line;
 * the others one.
 */
static unsigned int bus_bits_per_clock(const struct emmcsim_bus *bus)
{
	return bus->timing == MMC_TIMING_MMC_DDR52 || bus->timing == MMC_TIMING_MMC_HS400 ||
		bus->timing == MMC_TIMING_UHS_DDR50 ? 2 : 1;
}

/*
 * Data on the DAT lines, at the clock the core set: per block its bits over the width
 * and the bits per clock, plus 18 clocks on each line: the start bit, the CRC16 and the
 * end bit. In DDR each line carries two CRC16s, one for the bits of each clock edge,
 * interleaved on both edges: 16 clocks, as the one CRC16 of SDR takes (JESD84-B51
 * 5.3.4), so a block costs 8 x blksz / (width x 2) + 18 clocks there.
 */
u64 emmcsim_bus_ns(const struct emmcsim_bus *bus, unsigned int blksz, unsigned int blocks)
{
	u64 clocks = (u64)blocks *
		(blksz * 8 / (bus->width * bus_bits_per_clock(bus)) + 18);

	return div_u64(clocks * NSEC_PER_SEC, bus_clock(bus));
}

u64 emmcsim_per_kib(enum emmcsim_param_id id, u64 bytes)
{
	return div_u64(bytes * emmcsim_param(id), 1024);
}

/* --- status --- */

static bool exception_pending(const struct emmcsim_card *card)
{
	/* URGENT_BKOPS (bit 0) is always enabled; the rest by EXCEPTION_EVENTS_CTRL. */
	return card->ext_csd[EXT_CSD_EXP_EVENTS_STATUS] &
		(card->ext_csd[EXT_CSD_EXP_EVENTS_CTRL] | 0x01);
}

/* R1 as the card reports it now; the clear-on-read bits are cleared. */
static u32 r1(struct emmcsim_card *card, u32 state)
{
	u32 status = card->pending | (state << 9) | R1_READY_FOR_DATA;

	if (exception_pending(card))
		status |= R1_EXCEPTION_EVENT;
	card->pending = 0;
	return status;
}

u32 emmcsim_card_r1(struct emmcsim_card *card, u32 state)
{
	return r1(card, state);
}

/* --- data commands --- */

bool emmcsim_card_range_ok(const struct emmcsim_card *card, u64 sector, u64 blocks)
{
	return sector < card->sectors && blocks <= card->sectors - sector;
}

/* After a SWITCH: a flush, or the cache turned off, waits for the cache to drain. */
static u64 switch_cache(struct emmcsim_host *h, u32 err)
{
	u8 *e = h->card.ext_csd;
	u64 ns = 0;

	if (err)
		return 0;
	if (e[EXT_CSD_FLUSH_CACHE] || !(e[EXT_CSD_CACHE_CTRL] & 1))
		ns = emmcsim_cache_flush_ns(h);
	e[EXT_CSD_FLUSH_CACHE] = 0;	/* a command, not a state */
	return ns;
}

/* CMD17/18/24/25: returns the card's time besides the command itself. */
u64 emmcsim_card_data(struct emmcsim_host *h, struct mmc_command *cmd,
		      struct mmc_data *data, bool write)
{
	struct emmcsim_card *card = &h->card;
	bool sbc = card->sbc_set;
	u32 sbc_arg = card->sbc_arg;
	size_t len;
	u64 ns;
	int err;

	card->sbc_set = false;
	if (!data || data->blksz != SECTOR) {
		card->pending |= R1_BLOCK_LEN_ERROR;
		if (data)
			data->error = -EIO;
		return 0;
	}
	len = (size_t)data->blocks * SECTOR;
	ns = emmcsim_bus_ns(&h->bus, SECTOR, data->blocks);
	switch (emmcsim_fault_data(h, cmd->arg, data->blocks)) {
	case FAULT_NONE:
		break;
	case FAULT_CMD_CRC:
		cmd->error = -EILSEQ;
		emmcsim_err(h, MMC_ERR_CMD_CRC);
		return 0;
	case FAULT_CMD_TIMEOUT:
		cmd->error = -ETIMEDOUT;
		emmcsim_err(h, MMC_ERR_CMD_TIMEOUT);
		return 0;
	case FAULT_DATA_CRC:
		data->error = -EILSEQ;	/* the data moved, and was found bad */
		emmcsim_err(h, MMC_ERR_DAT_CRC);
		return ns;
	default:
		data->error = -ETIMEDOUT;
		emmcsim_err(h, MMC_ERR_DAT_TIMEOUT);
		return 0;
	}
	if (write)
		h->stats.write_cmds++;
	else
		h->stats.read_cmds++;
	if (sbc && (sbc_arg & CMD23_PACKED) && cmd->opcode == MMC_WRITE_MULTIPLE_BLOCK) {
		ns += emmcsim_packed_write(h, data, sbc_arg & 0xffff);
		data->bytes_xfered = len;
		return ns;
	}
	if (sbc && (sbc_arg & CMD23_PACKED) && cmd->opcode == MMC_READ_MULTIPLE_BLOCK) {
		ns += emmcsim_packed_read(h, data, sbc_arg & 0xffff);
		if (!data->error)
			data->bytes_xfered = len;
		return ns;
	}
	if (!emmcsim_card_range_ok(card, cmd->arg, data->blocks)) {
		cmd->resp[0] |= R1_OUT_OF_RANGE;
		data->error = -ETIMEDOUT;	/* the card sends no data */
		emmcsim_err(h, MMC_ERR_DAT_TIMEOUT);
		return 0;
	}
	if (write) {
		err = emmcsim_store_write(&card->store, (u64)cmd->arg * SECTOR, data->sg,
					  data->sg_len, 0, len);
		if (err) {
			pr_warn_ratelimited("emmcsim: write at sector %u failed (%d): store_limit_mb %d reached?\n",
					    cmd->arg, err, emmcsim_param(P_STORE_LIMIT_MB));
			card->pending |= R1_ERROR;
			data->error = -EIO;
			return ns;
		}
		h->stats.write_blocks += data->blocks;
		if (emmcsim_cache_on(card) && !(sbc && (sbc_arg & MMC_CMD23_ARG_REL_WR))) {
			ns += emmcsim_cache_write_ns(h, len);
		} else {
			ns += emmcsim_param(P_WRITE_ACCESS_NS) +
			      emmcsim_per_kib(P_PROGRAM_NS_PER_KIB, len);
			ns += emmcsim_flash_write_ns(h, (u64)cmd->arg * SECTOR, len);
		}
	} else {
		emmcsim_store_read(&card->store, (u64)cmd->arg * SECTOR, data->sg,
				   data->sg_len, 0, len);
		h->stats.read_blocks += data->blocks;
		ns += emmcsim_param(P_READ_ACCESS_NS) + emmcsim_per_kib(P_READ_NS_PER_KIB, len);
		ns += emmcsim_flash_first_page_ns((u64)cmd->arg * SECTOR, len);
		ns += emmcsim_flash_boundary_ns(h, (u64)cmd->arg * SECTOR, len);
	}
	data->bytes_xfered = len;
	return ns;
}

static u64 send_ext_csd(struct emmcsim_host *h, struct mmc_data *data)
{
	struct emmcsim_card *card = &h->card;

	if (!data || data->blksz * data->blocks != SECTOR) {
		if (data)
			data->error = -EIO;
		return 0;
	}
	sg_copy_from_buffer(data->sg, data->sg_len, card->ext_csd, SECTOR);
	data->bytes_xfered = SECTOR;
	/* The packed failure event is reported once: reading EXT_CSD clears it. */
	card->ext_csd[EXT_CSD_EXP_EVENTS_STATUS] &= ~PACKED_FAILURE_EVENT;
	return emmcsim_bus_ns(&h->bus, SECTOR, 1);
}

u64 emmcsim_card_erase(struct emmcsim_host *h, u32 arg)
{
	struct emmcsim_card *card = &h->card;
	u32 start = card->erase_start, end = card->erase_end;

	/* ERASE (0), TRIM (1), DISCARD (3); no secure variants (SEC_FEATURE_SUPPORT) */
	if ((arg != 0 && arg != 1 && arg != 3) || end < start ||
	    !emmcsim_card_range_ok(card, start, (u64)end - start + 1)) {
		card->pending |= R1_ERASE_PARAM;
		return 0;
	}
	emmcsim_store_discard(&card->store, (u64)start * SECTOR,
			      ((u64)end - start + 1) * SECTOR);
	h->stats.erases++;
	return emmcsim_param(P_ERASE_NS);
}

unsigned int emmcsim_resp_bits(const struct mmc_command *cmd)
{
	if (cmd->flags & MMC_RSP_136)
		return 136;
	return (cmd->flags & MMC_RSP_PRESENT) ? 48 : 0;
}

/* The commands of the identification phase and of a deselected card. */
static bool identify(struct emmcsim_card *card, struct mmc_command *cmd)
{
	switch (cmd->opcode) {
	case MMC_GO_IDLE_STATE:
		if (cmd->arg != 0xfffffffa) {	/* not boot mode */
			card->state = R1_STATE_IDLE;
			card->sbc_set = false;
			card->packed_read_n = 0;
		}
		return true;
	case MMC_SEND_OP_COND:
		if (card->state != R1_STATE_IDLE && card->state != R1_STATE_READY)
			break;
		cmd->resp[0] = card->ocr | OCR_READY;
		if (cmd->arg)
			card->state = R1_STATE_READY;
		return true;
	case MMC_ALL_SEND_CID:
		if (card->state != R1_STATE_READY)
			break;
		memcpy(cmd->resp, card->cid, sizeof(card->cid));
		card->state = R1_STATE_IDENT;
		return true;
	case MMC_SET_RELATIVE_ADDR:
		if (card->state != R1_STATE_IDENT)
			break;
		card->rca = cmd->arg >> 16;
		cmd->resp[0] = r1(card, card->state);
		card->state = R1_STATE_STBY;
		return true;
	case MMC_SEND_CSD:
	case MMC_SEND_CID:
		if (card->state != R1_STATE_STBY || cmd->arg >> 16 != card->rca)
			break;
		memcpy(cmd->resp, cmd->opcode == MMC_SEND_CSD ? card->csd : card->cid,
		       sizeof(card->cid));
		return true;
	case MMC_SELECT_CARD:
		if (cmd->arg >> 16 == card->rca && card->rca) {
			cmd->resp[0] = r1(card, card->state);
			card->state = R1_STATE_TRAN;
		} else if (card->state != R1_STATE_IDLE) {
			card->state = R1_STATE_STBY;	/* deselected: no response */
		}
		return true;
	}
	return false;
}

u64 emmcsim_card_command(struct emmcsim_host *h, struct mmc_command *cmd,
			 struct mmc_data *data)
{
	struct emmcsim_card *card = &h->card;
	u64 ns = emmcsim_cmd_ns(&h->bus, emmcsim_resp_bits(cmd));
	u32 state = card->state, err;

	h->stats.commands++;
	cmd->error = 0;
	memset(cmd->resp, 0, sizeof(cmd->resp));
	if (data) {
		data->error = 0;
		data->bytes_xfered = 0;
	}
	if (emmcsim_sd())	/* the SD personality's own command set (sd.c) */
		return ns + emmcsim_sd_command(h, cmd, data);
	if (identify(card, cmd))
		return ns;
	if (state != R1_STATE_TRAN && cmd->opcode != MMC_SEND_STATUS &&
	    cmd->opcode != MMC_SLEEP_AWAKE && cmd->opcode != MMC_STOP_TRANSMISSION)
		goto illegal;

	switch (cmd->opcode) {
	case MMC_SLEEP_AWAKE:
		card->sleeping = cmd->arg & BIT(15);
		cmd->resp[0] = r1(card, state);
		return ns + emmcsim_param(P_SWITCH_NS);
	case MMC_SWITCH:
		cmd->resp[0] = r1(card, state);
		err = emmcsim_regs_switch(h, (cmd->arg >> 24) & 3, (cmd->arg >> 16) & 0xff,
					  (cmd->arg >> 8) & 0xff);
		card->pending |= err;	/* SWITCH_ERROR shows in the next status */
		h->stats.switches++;
		return ns + emmcsim_param(P_SWITCH_NS) + switch_cache(h, err);
	case MMC_SEND_EXT_CSD:
		cmd->resp[0] = r1(card, state);
		return ns + send_ext_csd(h, data);
	case MMC_STOP_TRANSMISSION:	/* transfers end with their request: TRAN */
		cmd->resp[0] = r1(card, state);
		return ns;
	case MMC_SEND_STATUS:
		cmd->resp[0] = r1(card, state);
		return ns;
	case MMC_SET_BLOCKLEN:
		if (cmd->arg != SECTOR)
			card->pending |= R1_BLOCK_LEN_ERROR;
		cmd->resp[0] = r1(card, state);
		return ns;
	case MMC_SET_BLOCK_COUNT:
		card->sbc_arg = cmd->arg;
		card->sbc_set = true;
		cmd->resp[0] = r1(card, state);
		return ns;
	case MMC_READ_SINGLE_BLOCK:
	case MMC_READ_MULTIPLE_BLOCK:
	case MMC_WRITE_BLOCK:
	case MMC_WRITE_MULTIPLE_BLOCK:
		ns += emmcsim_card_data(h, cmd, data, cmd->opcode == MMC_WRITE_BLOCK ||
					cmd->opcode == MMC_WRITE_MULTIPLE_BLOCK);
		cmd->resp[0] |= r1(card, state);
		return ns;
	case MMC_SEND_TUNING_BLOCK_HS200:	/* in HS200 only (speed.c) */
		if ((card->ext_csd[EXT_CSD_HS_TIMING] & 0x0f) != EXT_CSD_TIMING_HS200)
			break;
		cmd->resp[0] = r1(card, state);
		return ns + emmcsim_tuning_block(h, cmd, data);
	case MMC_ERASE_GROUP_START:
		card->erase_start = cmd->arg;
		cmd->resp[0] = r1(card, state);
		return ns;
	case MMC_ERASE_GROUP_END:
		card->erase_end = cmd->arg;
		cmd->resp[0] = r1(card, state);
		return ns;
	case MMC_ERASE:
		ns += emmcsim_card_erase(h, cmd->arg);
		cmd->resp[0] = r1(card, state);
		return ns;
	}
illegal:
	/* A card does not answer a command it does not take in this state. */
	card->pending |= R1_ILLEGAL_COMMAND;
	cmd->error = -ETIMEDOUT;
	emmcsim_err(h, MMC_ERR_CMD_TIMEOUT);
	return ns;
}

/* xorshift64*: the card's random numbers, from the seed parameter. */
u64 emmcsim_random(struct emmcsim_card *card)
{
	u64 x = card->rng;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	card->rng = x;
	return x * 0x2545f4914f6cdd1dULL;
}

int emmcsim_card_init(struct emmcsim_card *card)
{
	u32 b = emmcsim_param(P_BOOT_OFFSET_PERMILLE) * 1000;

	memset(card, 0, sizeof(*card));
	card->ocr = SIM_OCR;
	card->state = R1_STATE_IDLE;
	card->rng = 0x9e3779b97f4a7c15ULL ^ (u64)emmcsim_param(P_SEED);
	/* This boot's offset: uniform on the integers -b..b ppm, the first draw. */
	if (b)
		card->boot_ppm = (s32)((u32)(emmcsim_random(card) >> 32) % (2 * b + 1)) -
				 (s32)b;
	emmcsim_regs_init(card);
	if (emmcsim_sd())
		emmcsim_sd_regs_init(card);
	return emmcsim_store_init(&card->store,
				  (unsigned long)emmcsim_param(P_STORE_LIMIT_MB) << (20 - PAGE_SHIFT));
}

void emmcsim_card_free(struct emmcsim_card *card)
{
	emmcsim_store_free(&card->store);
}

/* Power removed: back to idle, volatile registers reset; the data stays (flash). */
void emmcsim_card_power_off(struct emmcsim_card *card)
{
	card->state = R1_STATE_IDLE;
	card->rca = 0;
	card->pending = 0;
	card->sleeping = false;
	card->sbc_set = false;
	card->packed_read_n = 0;
	/* A card closes its open units before it loses power. */
	memset(&card->open_aus, 0, sizeof(card->open_aus));
	emmcsim_regs_power_off(card);
	emmcsim_sd_power_off(card);
}
