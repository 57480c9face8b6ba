// SPDX-License-Identifier: GPL-2.0
/*
 * emmcsim SD personality (sd=1, README.md "SD card"): the card answers as an SDHC card
 * of the SD Physical Layer Specification 5.1 through the core's SD path instead of as
 * the eMMC. The host comes up without MMC_CAP2_NO_SD and with MMC_CAP2_NO_MMC and
 * MMC_CAP2_NO_SDIO, so mmc_rescan_try_freq() (drivers/mmc/core/core.c, Linux 6.12 and
 * 7.2) sends CMD0 and CMD8 and goes straight to mmc_attach_sd() (sd.c): ACMD41 with
 * arg 0 for the OCR, then mmc_sd_init_card(): mmc_sd_get_cid() (CMD0, CMD8, ACMD41 with
 * HCS until the card is no longer busy, CMD11 when both ask for 1.8 V, CMD2), CMD3 (R6),
 * CMD9 (CSD version 2.0), CMD7, mmc_sd_setup_card() (ACMD51 SCR, ACMD13 SD status, CMD6
 * mode 0), then mmc_sd_init_uhs_card() (ACMD6, CMD6 bus speed, CMD19 tuning) or
 * mmc_sd_switch_hs() and ACMD6. mmc_block moves data with CMD17/18/24/25, CMD23 when the
 * SCR offers it (mmc_blk_alloc_req(), drivers/mmc/core/block.c), else CMD12; CMD13 after
 * writes; CMD32/33/38 for discards (mmc_do_erase(), core.c); ACMD22 after a failed write.
 *
 * The data commands, erase, the flash geometry, the faults and the timing model are the
 * eMMC's (card.c): only the commands and registers of an SD card are here.
 */
#include <linux/kernel.h>
#include <linux/log2.h>
#include <linux/mmc/card.h>
#include <linux/mmc/host.h>
#include <linux/mmc/mmc.h>
#include <linux/mmc/sd.h>
#include <linux/scatterlist.h>
#include <linux/string.h>

#include "emmcsim.h"

#define SECTOR		512
#define OCR_READY	BIT(31)
/* 2.7-3.6 V (SD Physical Layer 5.1, table 5-1 OCR) */
#define SD_OCR_VDD	0x00ff8000
/* The RCA the card publishes with CMD3 (an SD card picks its own; the host takes it). */
#define SD_RCA		0xaaaa
/* ACMD41s with HCS answered busy after the first, as a card's power-up takes a while. */
#define SD_BUSY_ACMD41	1

/* CID: manufacturer 0xee and product "SIMSD" name the simulation, as the eMMC's does. */
#define SD_MID		0xee
#define SD_OID		"SM"
#define SD_PNM		"SIMSD"
#define SD_PRV		0x10
#define SD_PSN		0x00005eed

/* --- registers --- */

/* CID (SD 5.1, 5.2): MDT is years since 2000 and the month, 12/2025. */
static void build_cid(u32 cid[4])
{
	const char *oid = SD_OID, *pnm = SD_PNM;
	int i;

	memset(cid, 0, 4 * sizeof(u32));
	emmcsim_set_bits(cid, 120, 8, SD_MID);
	for (i = 0; i < 2; i++)
		emmcsim_set_bits(cid, 112 - 8 * i, 8, oid[i]);
	for (i = 0; i < 5; i++)
		emmcsim_set_bits(cid, 96 - 8 * i, 8, pnm[i]);
	emmcsim_set_bits(cid, 56, 8, SD_PRV);
	emmcsim_set_bits(cid, 24, 32, SD_PSN);
	emmcsim_set_bits(cid, 12, 8, 25);
	emmcsim_set_bits(cid, 8, 4, 12);
	emmcsim_set_crc7(cid);
}

/*
 * CSD version 2.0 (SD 5.1, 5.3.3): block-addressed (SDHC), C_SIZE in 512 KiB units,
 * which mmc_decode_csd() (drivers/mmc/core/sd.c) reads as (C_SIZE + 1) x 512 KiB.
 */
static void build_csd(u32 csd[4], u64 sectors)
{
	memset(csd, 0, 4 * sizeof(u32));
	emmcsim_set_bits(csd, 126, 2, 1);	/* CSD_STRUCTURE: version 2.0 */
	emmcsim_set_bits(csd, 112, 8, 0x0e);	/* TAAC: 1 ms, fixed in 2.0 */
	emmcsim_set_bits(csd, 96, 8, 0x32);	/* TRAN_SPEED: 25 MHz */
	/* CCC: classes 0, 2, 4, 5, 7, 8 (CCC_APP_SPEC) and 10 (CCC_SWITCH) */
	emmcsim_set_bits(csd, 84, 12, 0x5b5);
	emmcsim_set_bits(csd, 80, 4, 9);	/* READ_BL_LEN: 512 */
	emmcsim_set_bits(csd, 48, 22, (u32)(sectors / 1024 - 1));	/* C_SIZE */
	emmcsim_set_bits(csd, 46, 1, 1);	/* ERASE_BLK_EN: erase by the sector */
	emmcsim_set_bits(csd, 39, 7, 0x7f);	/* SECTOR_SIZE: 64 KiB */
	emmcsim_set_bits(csd, 26, 3, 2);	/* R2W_FACTOR: x4 */
	emmcsim_set_bits(csd, 22, 4, 9);	/* WRITE_BL_LEN: 512 */
	emmcsim_set_crc7(csd);
}

/*
 * SCR (SD 5.1, 5.6), bits 63:32: SCR_STRUCTURE 0, SD_SPEC 2 with SD_SPEC3 and SD_SPEC4
 * and SD_SPECX 1 (version 5.xx), erased data 0 (as the store reads it), SD_SECURITY 3
 * (SDHC), buses of 1 and 4 lines, CMD_SUPPORT: CMD20 (speed class) and, with sd_cmd23,
 * CMD23; not CMD48/49 (no extension registers: sd_read_ext_regs() reads none).
 */
static void build_scr(u32 scr[2])
{
	u32 cmds = BIT(0) | (emmcsim_param(P_SD_CMD23) ? BIT(1) : 0);

	scr[0] = 2 << 24 | 3 << 20 | 5 << 16 | BIT(15) | BIT(10) | 1 << 6 | cmds;
	scr[1] = 0;
}

void emmcsim_sd_regs_init(struct emmcsim_card *card)
{
	/* C_SIZE counts 512 KiB: the capacity in whole MiB is always a whole number of them */
	build_cid(card->cid);
	build_csd(card->csd, card->sectors);
	build_scr(card->sd.scr);
	card->ocr = SD_OCR_VDD;
}

/* AU_SIZE codes of SD 5.1 table 4-47 (sd_au_size[] of drivers/mmc/core/sd.c), KiB. */
static u8 au_code(unsigned int kib)
{
	static const unsigned int au_kib[16] = {
		0, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 12288, 16384, 24576,
		32768, 65536,
	};
	u8 i;

	for (i = 1; i < 16; i++)
		if (au_kib[i] == kib)
			return i;
	return 0;
}

static void set_field(u8 *reg, unsigned int bits, unsigned int start, unsigned int size,
		      u32 value)
{
	unsigned int i;

	for (i = 0; i < size; i++) {
		unsigned int bit = start + i, byte = (bits - 1 - bit) / 8;

		if (value & BIT(i))
			reg[byte] |= BIT(bit % 8);
		else
			reg[byte] &= ~BIT(bit % 8);
	}
}

/*
 * The SD status (SD 5.1, 4.10.2), 512 bits sent MSB first: the bus width ACMD6 set,
 * speed class 10, the allocation unit of the flash geometry (erase_block_kib, when it is
 * one the table has), U1 and its AU with sd_uhs, application performance class A1,
 * DISCARD_SUPPORT (so mmc_read_ssr() takes SD_DISCARD_ARG with SD_SPECX set). No erase
 * timing (ERASE_SIZE 0): the core then uses its defaults.
 */
static void build_ssr(const struct emmcsim_card *card, u8 ssr[64])
{
	u8 au = au_code(emmcsim_param(P_ERASE_BLOCK_KIB));

	memset(ssr, 0, 64);
	set_field(ssr, 512, 510, 2, card->sd.width);	/* DAT_BUS_WIDTH */
	set_field(ssr, 512, 440, 8, 4);			/* SPEED_CLASS: class 10 */
	set_field(ssr, 512, 428, 4, au);		/* AU_SIZE */
	if (emmcsim_param(P_SD_UHS)) {
		set_field(ssr, 512, 396, 4, 1);		/* UHS_SPEED_GRADE: U1 */
		set_field(ssr, 512, 392, 4, au >= 7 ? au : 0);	/* UHS_AU_SIZE: 1 MiB up */
	}
	set_field(ssr, 512, 336, 4, 1);			/* APP_PERF_CLASS: A1 */
	set_field(ssr, 512, 313, 1, 1);			/* DISCARD_SUPPORT */
}

/* --- CMD6 SWITCH_FUNC (SD 5.1, 4.3.10) --- */

/* The functions of group g (0-based) the card supports now, a bit each. */
static u16 group_support(const struct emmcsim_card *card, unsigned int g)
{
	u16 bits = BIT(0);	/* the default function of every group */

	if (g != 0)	/* command system, driver strength B, 200 mA, groups 5, 6 */
		return bits;
	if (emmcsim_param(P_CARD_HS))
		bits |= SD_MODE_HIGH_SPEED;		/* HS at 3.3 V, SDR25 at 1.8 V */
	/* the UHS-I modes only at 1.8 V: mmc_sd_card_using_v18() relies on it */
	if (emmcsim_param(P_SD_UHS) && card->sd.v18)
		bits |= SD_MODE_UHS_SDR50 | SD_MODE_UHS_SDR104 | SD_MODE_UHS_DDR50;
	return bits;
}

/*
 * The 64-byte status of CMD6 in mode 0 (check) or 1 (set): the maximum current, each
 * group's support bits, the function each group would take (0xf: the one asked for is
 * not supported, and in mode 1 then no group switches), data structure version 1, no
 * function busy. Byte offsets as mmc_read_switch() and mmc_sd_switch_hs() read them.
 */
static u64 switch_func(struct emmcsim_host *h, u32 arg, struct mmc_data *data)
{
	struct emmcsim_card *card = &h->card;
	bool set = arg & BIT(31), ok = true;
	u8 status[64], result[6];
	unsigned int g;

	if (!data || data->blksz * data->blocks != sizeof(status)) {
		if (data)
			data->error = -EIO;
		return 0;
	}
	memset(status, 0, sizeof(status));
	status[1] = 200;	/* 200 mA */
	for (g = 0; g < 6; g++) {
		u8 f = (arg >> (4 * g)) & 0xf;
		u16 support = group_support(card, g);

		status[12 - 2 * g] = support >> 8;
		status[13 - 2 * g] = support & 0xff;
		if (f == 0xf)
			result[g] = card->sd.func[g];
		else if (support & BIT(f))
			result[g] = f;
		else
			result[g] = 0xf;
		ok &= result[g] != 0xf;
	}
	if (set && ok)
		memcpy(card->sd.func, result, sizeof(result));
	status[14] = result[5] << 4 | result[4];
	status[15] = result[3] << 4 | result[2];
	status[16] = result[1] << 4 | result[0];
	status[17] = 1;		/* data structure version: busy status defined */
	sg_copy_from_buffer(data->sg, data->sg_len, status, sizeof(status));
	data->bytes_xfered = sizeof(status);
	return emmcsim_bus_ns(&h->bus, sizeof(status), 1);
}

/* A register read on the DAT lines (SCR, SD status, ACMD22's count): its time. */
static u64 send_data(struct emmcsim_host *h, struct mmc_data *data, const void *buf,
		     size_t len)
{
	if (!data || data->blksz * data->blocks != len) {
		if (data)
			data->error = -EIO;
		return 0;
	}
	sg_copy_from_buffer(data->sg, data->sg_len, buf, len);
	data->bytes_xfered = len;
	return emmcsim_bus_ns(&h->bus, len, 1);
}

/* --- commands --- */

/* ACMD41: the OCR; busy (bit 31 clear) until initialised, CCS and S18A when ready. */
static bool app_op_cond(struct emmcsim_card *card, struct mmc_command *cmd)
{
	u32 arg = cmd->arg;

	if (card->state != R1_STATE_IDLE && card->state != R1_STATE_READY)
		return false;
	cmd->resp[0] = card->ocr;
	if (!(arg & SD_OCR_VDD))	/* an inquiry: the OCR, nothing started */
		return true;
	/* A high-capacity card never gets ready for a host that did not say HCS after CMD8. */
	if (!card->sd.if_cond || !(arg & SD_OCR_CCS))
		return true;
	if (card->sd.busy_left) {
		card->sd.busy_left--;
		return true;
	}
	cmd->resp[0] |= OCR_READY | SD_OCR_CCS;
	if (emmcsim_param(P_SD_UHS) && (arg & SD_OCR_S18R) && !card->sd.v18)
		cmd->resp[0] |= SD_ROCR_S18A;
	card->state = R1_STATE_READY;
	return true;
}

enum app_result { APP_NONE, APP_DONE, APP_ILLEGAL };

/*
 * The application commands (after CMD55): APP_NONE for a number that is no ACMD of this
 * card (then taken as the CMD of that number, SD 5.1 4.3.9), APP_ILLEGAL for one it does
 * not take in this state or with this argument.
 */
static enum app_result app_command(struct emmcsim_host *h, struct mmc_command *cmd,
				   struct mmc_data *data, u64 *ns)
{
	struct emmcsim_card *card = &h->card;
	u32 state = card->state;
	__be32 buf[16];

	switch (cmd->opcode) {
	case SD_APP_OP_COND:
		return app_op_cond(card, cmd) ? APP_DONE : APP_ILLEGAL;
	case SD_APP_SET_BUS_WIDTH:
	case SD_APP_SD_STATUS:
	case SD_APP_SEND_NUM_WR_BLKS:
	case SD_APP_SEND_SCR:
		if (state != R1_STATE_TRAN)
			return APP_ILLEGAL;
		break;
	default:
		return APP_NONE;
	}
	switch (cmd->opcode) {
	case SD_APP_SET_BUS_WIDTH:
		if (cmd->arg != SD_BUS_WIDTH_1 && cmd->arg != SD_BUS_WIDTH_4)
			return APP_ILLEGAL;
		card->sd.width = cmd->arg;
		break;
	case SD_APP_SD_STATUS:
		build_ssr(card, (u8 *)buf);
		*ns += send_data(h, data, buf, 64);
		break;
	case SD_APP_SEND_NUM_WR_BLKS:
		buf[0] = cpu_to_be32(card->sd.written);
		*ns += send_data(h, data, buf, 4);
		break;
	case SD_APP_SEND_SCR:
		buf[0] = cpu_to_be32(card->sd.scr[0]);
		buf[1] = cpu_to_be32(card->sd.scr[1]);
		*ns += send_data(h, data, buf, 8);
		break;
	}
	cmd->resp[0] = emmcsim_card_r1(card, state) | R1_APP_CMD;
	return APP_DONE;
}

/* The identification commands; false: not one this card takes in this state. */
static bool identify(struct emmcsim_card *card, struct mmc_command *cmd)
{
	switch (cmd->opcode) {
	case MMC_GO_IDLE_STATE:
		card->state = R1_STATE_IDLE;
		card->sbc_set = false;
		card->sd.if_cond = false;
		card->sd.busy_left = SD_BUSY_ACMD41;
		card->sd.width = SD_BUS_WIDTH_1;
		memset(card->sd.func, 0, sizeof(card->sd.func));
		return true;
	case SD_SEND_IF_COND:	/* R7: 2.7-3.6 V accepted, the check pattern echoed */
		if (card->state != R1_STATE_IDLE || ((cmd->arg >> 8) & 0xf) != 1)
			return false;
		card->sd.if_cond = true;
		cmd->resp[0] = cmd->arg & 0xfff;
		return true;
	case SD_SWITCH_VOLTAGE:	/* CMD11: after an ACMD41 that said S18A */
		if (card->state != R1_STATE_READY || !emmcsim_param(P_SD_UHS) || card->sd.v18)
			return false;
		cmd->resp[0] = emmcsim_card_r1(card, card->state);
		card->sd.switching = true;	/* DAT0-3 low until the host switches */
		return true;
	case MMC_ALL_SEND_CID:
		if (card->state != R1_STATE_READY)
			return false;
		memcpy(cmd->resp, card->cid, sizeof(card->cid));
		card->state = R1_STATE_IDENT;
		return true;
	case SD_SEND_RELATIVE_ADDR:	/* R6: the RCA, status bits 23, 22, 19 and 12:0 */
		if (card->state != R1_STATE_IDENT && card->state != R1_STATE_STBY)
			return false;
		card->rca = SD_RCA;
		cmd->resp[0] = (u32)SD_RCA << 16 | (emmcsim_card_r1(card, card->state) & 0x1fff);
		card->state = R1_STATE_STBY;
		return true;
	case MMC_SEND_CSD:
	case MMC_SEND_CID:
		if (card->state != R1_STATE_STBY || cmd->arg >> 16 != card->rca)
			return false;
		memcpy(cmd->resp, cmd->opcode == MMC_SEND_CSD ? card->csd : card->cid,
		       sizeof(card->cid));
		return true;
	case MMC_SELECT_CARD:
		if (card->state == R1_STATE_IDLE || card->state == R1_STATE_READY ||
		    card->state == R1_STATE_IDENT)
			return false;
		if (cmd->arg >> 16 == card->rca) {
			cmd->resp[0] = emmcsim_card_r1(card, card->state);
			card->state = R1_STATE_TRAN;
		} else {
			card->state = R1_STATE_STBY;	/* deselected: no response */
		}
		return true;
	}
	return false;
}

/* The commands of the transfer state; false: not one this card takes in this state. */
static bool transfer(struct emmcsim_host *h, struct mmc_command *cmd,
		     struct mmc_data *data, u64 *ns)
{
	struct emmcsim_card *card = &h->card;
	u32 state = card->state;
	u64 before;

	if (state != R1_STATE_TRAN && cmd->opcode != MMC_SEND_STATUS &&
	    cmd->opcode != MMC_STOP_TRANSMISSION)
		return false;
	switch (cmd->opcode) {
	case SD_SWITCH:
		*ns += switch_func(h, cmd->arg, data);
		break;
	case MMC_STOP_TRANSMISSION:	/* transfers end with their request: TRAN */
	case MMC_SEND_STATUS:
		break;
	case MMC_SET_BLOCKLEN:		/* SDHC: the block is 512 bytes whatever is set */
		break;
	case MMC_SET_BLOCK_COUNT:
		if (!emmcsim_param(P_SD_CMD23))
			return false;
		card->sbc_arg = cmd->arg;
		card->sbc_set = true;
		break;
	case MMC_READ_SINGLE_BLOCK:
	case MMC_READ_MULTIPLE_BLOCK:
		*ns += emmcsim_card_data(h, cmd, data, false);
		break;
	case MMC_WRITE_BLOCK:
	case MMC_WRITE_MULTIPLE_BLOCK:
		before = h->stats.write_blocks;
		*ns += emmcsim_card_data(h, cmd, data, true);
		card->sd.written = h->stats.write_blocks - before;
		break;
	case MMC_SEND_TUNING_BLOCK:	/* CMD19: at 1.8 V in SDR50, SDR104, DDR50 */
		if (!card->sd.v18 || card->sd.func[0] < UHS_SDR50_BUS_SPEED)
			return false;
		*ns += emmcsim_tuning_send(h, data, false);
		break;
	case SD_ERASE_WR_BLK_START:
		card->erase_start = cmd->arg;
		break;
	case SD_ERASE_WR_BLK_END:
		card->erase_end = cmd->arg;
		break;
	case MMC_ERASE:			/* SD_ERASE_ARG, or SD_DISCARD_ARG (the SD status) */
		if (cmd->arg != SD_ERASE_ARG && cmd->arg != SD_DISCARD_ARG)
			card->pending |= R1_ERASE_PARAM;
		else
			*ns += emmcsim_card_erase(h, cmd->arg);
		break;
	default:
		return false;
	}
	cmd->resp[0] |= emmcsim_card_r1(card, state);
	return true;
}

/* One command to the SD card; returns the card's time besides the command's bits. */
u64 emmcsim_sd_command(struct emmcsim_host *h, struct mmc_command *cmd,
		       struct mmc_data *data)
{
	struct emmcsim_card *card = &h->card;
	bool app = card->sd.app;
	u64 ns = 0;

	card->sd.app = false;
	if (cmd->opcode == MMC_APP_CMD) {	/* CMD55: the next command is an ACMD */
		if (card->state != R1_STATE_IDLE && card->state != R1_STATE_READY &&
		    cmd->arg >> 16 != card->rca)
			goto illegal;
		card->sd.app = true;
		cmd->resp[0] = emmcsim_card_r1(card, card->state) | R1_APP_CMD;
		return 0;
	}
	switch (app ? app_command(h, cmd, data, &ns) : APP_NONE) {
	case APP_DONE:
		return ns;
	case APP_ILLEGAL:
		goto illegal;
	case APP_NONE:
		break;
	}
	if (identify(card, cmd) || transfer(h, cmd, data, &ns))
		return ns;
illegal:
	/* A card does not answer a command it does not take in this state. */
	card->pending |= R1_ILLEGAL_COMMAND;
	cmd->error = -ETIMEDOUT;
	emmcsim_err(h, MMC_ERR_CMD_TIMEOUT);
	return ns;
}

/*
 * The host's signal voltage (->start_signal_voltage_switch): 1.8 V after a CMD11 ends
 * the switch, the card releases DAT0-3 (mmc_set_uhs_voltage(), core.c, checks card_busy
 * before and after). The card stays at 1.8 V until its power goes off.
 */
int emmcsim_sd_signal_voltage(struct emmcsim_host *h, struct mmc_ios *ios)
{
	struct emmcsim_card *card = &h->card;

	if (ios->signal_voltage == MMC_SIGNAL_VOLTAGE_180 && card->sd.switching) {
		card->sd.v18 = true;
		WRITE_ONCE(card->sd.switching, false);
	}
	return 0;
}

void emmcsim_sd_power_off(struct emmcsim_card *card)
{
	card->sd.app = false;
	card->sd.if_cond = false;
	card->sd.busy_left = SD_BUSY_ACMD41;
	card->sd.v18 = false;
	WRITE_ONCE(card->sd.switching, false);
	card->sd.width = SD_BUS_WIDTH_1;
	memset(card->sd.func, 0, sizeof(card->sd.func));
}

/*
 * The SD host: 4 data lines when bus_width is 4 or 8 (an SD card has no more), SD high
 * speed with host_hs, the UHS-I modes of host_uhs; f_max 208 MHz when the host or the
 * card offers UHS-I (so a mode switched on later in debugfs caps can reach its clock),
 * 50 MHz otherwise. The eMMC's speed parameters do not apply; a command queue is refused
 * (the SD path would take it for a host software queue: mmc_sd_init_card()).
 */
int emmcsim_sd_host_init(struct mmc_host *mmc)
{
	int uhs = emmcsim_param(P_HOST_UHS);

	if (emmcsim_param(P_CMDQ_DEPTH)) {
		pr_err("emmcsim: invalid parameter cmdq_depth=%d: the SD card (sd=1) has no command queue, set cmdq_depth=0\n",
		       emmcsim_param(P_CMDQ_DEPTH));
		return -EINVAL;
	}
	mmc->caps = MMC_CAP_CMD23 | MMC_CAP_WAIT_WHILE_BUSY | MMC_CAP_NONREMOVABLE;
	if (emmcsim_param(P_BUS_WIDTH) >= 4)
		mmc->caps |= MMC_CAP_4_BIT_DATA;
	if (emmcsim_param(P_HOST_HS))
		mmc->caps |= MMC_CAP_SD_HIGHSPEED;
	if (uhs & 1)
		mmc->caps |= MMC_CAP_UHS_SDR12;
	if (uhs & 2)
		mmc->caps |= MMC_CAP_UHS_SDR25;
	if (uhs & 4)
		mmc->caps |= MMC_CAP_UHS_SDR50;
	if (uhs & 8)
		mmc->caps |= MMC_CAP_UHS_SDR104;
	if (uhs & 16)
		mmc->caps |= MMC_CAP_UHS_DDR50;
	mmc->caps2 = MMC_CAP2_NO_MMC | MMC_CAP2_NO_SDIO;
	mmc->f_max = uhs || emmcsim_param(P_SD_UHS) ? UHS_SDR104_MAX_DTR : HIGH_SPEED_MAX_DTR;
	return 0;
}
