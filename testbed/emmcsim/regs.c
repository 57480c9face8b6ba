// SPDX-License-Identifier: GPL-2.0
/*
 * emmcsim registers: the card's identity (CID, CSD, EXT_CSD of an eMMC 5.1, EXT_CSD_REV
 * 8) built from the parameters, and CMD6 SWITCH on the EXT_CSD bytes a host may write.
 * Field offsets and meanings: JESD84-B51, section 7 (the same numbers as
 * include/linux/mmc/mmc.h).
 */
#include <linux/kernel.h>
#include <linux/mmc/mmc.h>
#include <linux/string.h>

#include "emmcsim.h"

/* CID: manufacturer 0xee and product "SIMEMC" name the simulation (README.md). */
#define SIM_MID		0xee
#define SIM_OID		0x53	/* 'S' */
#define SIM_PNM		"SIMEMC"
#define SIM_PRV		0x10
#define SIM_PSN		0x00005eed
#define SIM_FW		"EMMCSIM1"

/* Sets bits [start + size - 1 : start] of a 128-bit register, word 0 = bits 127:96. */
void emmcsim_set_bits(u32 reg[4], unsigned int start, unsigned int size, u32 value)
{
	unsigned int i;

	for (i = 0; i < size; i++) {
		unsigned int bit = start + i;
		u32 *word = &reg[3 - bit / 32];
		u32 mask = 1u << (bit % 32);

		if (value & (1u << i))
			*word |= mask;
		else
			*word &= ~mask;
	}
}

static u8 get_byte(const u32 reg[4], unsigned int byte)	/* byte 15 = bits 127:120 */
{
	return reg[3 - byte / 4] >> ((byte % 4) * 8);
}

/* CRC7 (x^7 + x^3 + 1) over bits 127:8, into bits 7:1, end bit 0 set. */
void emmcsim_set_crc7(u32 reg[4])
{
	u8 crc = 0;
	int byte, bit;

	for (byte = 15; byte >= 1; byte--) {
		u8 b = get_byte(reg, byte);

		for (bit = 7; bit >= 0; bit--) {
			u8 in = ((b >> bit) & 1) ^ ((crc >> 6) & 1);

			crc = (crc << 1) & 0x7f;
			if (in)
				crc ^= 0x09;
		}
	}
	emmcsim_set_bits(reg, 0, 8, (crc << 1) | 1);
}

static void build_cid(u32 cid[4])
{
	const char *pnm = SIM_PNM;
	int i;

	memset(cid, 0, 4 * sizeof(u32));
	emmcsim_set_bits(cid, 120, 8, SIM_MID);
	emmcsim_set_bits(cid, 112, 2, 1);		/* CBX: BGA (discrete embedded) */
	emmcsim_set_bits(cid, 104, 8, SIM_OID);
	for (i = 0; i < 6; i++)
		emmcsim_set_bits(cid, 96 - 8 * i, 8, pnm[i]);
	emmcsim_set_bits(cid, 48, 8, SIM_PRV);
	emmcsim_set_bits(cid, 16, 32, SIM_PSN);
	/*
	 * MDT 12/2025: year code 12 = 1997 + 12 + 16 (with EXT_CSD_REV > 4, codes 0-12
	 * mean 2013-2025: 2025 is the latest year the 4-bit field can say).
	 */
	emmcsim_set_bits(cid, 12, 4, 12);
	emmcsim_set_bits(cid, 8, 4, 12);
	emmcsim_set_crc7(cid);
}

static void build_csd(u32 csd[4])
{
	memset(csd, 0, 4 * sizeof(u32));
	emmcsim_set_bits(csd, 126, 2, 3);	/* CSD_STRUCTURE: version in EXT_CSD */
	emmcsim_set_bits(csd, 122, 4, 4);	/* SPEC_VERS: 4.x and later */
	emmcsim_set_bits(csd, 112, 8, 0x27);	/* TAAC */
	emmcsim_set_bits(csd, 104, 8, 0x01);	/* NSAC */
	/* TRAN_SPEED 0x32: 26 MHz in JESD84's table, 25 MHz in Linux's tran_mant */
	emmcsim_set_bits(csd, 96, 8, 0x32);
	emmcsim_set_bits(csd, 84, 12, 0x8f5);	/* CCC: classes 0, 2, 4, 5, 6, 7, 8, 10, 11 */
	emmcsim_set_bits(csd, 80, 4, 9);	/* READ_BL_LEN: 512 */
	emmcsim_set_bits(csd, 62, 12, 0xfff);	/* C_SIZE: > 2 GiB, see SEC_COUNT */
	emmcsim_set_bits(csd, 59, 3, 7);	/* VDD_R_CURR_MIN */
	emmcsim_set_bits(csd, 56, 3, 7);	/* VDD_R_CURR_MAX */
	emmcsim_set_bits(csd, 53, 3, 7);	/* VDD_W_CURR_MIN */
	emmcsim_set_bits(csd, 50, 3, 7);	/* VDD_W_CURR_MAX */
	emmcsim_set_bits(csd, 47, 3, 7);	/* C_SIZE_MULT */
	emmcsim_set_bits(csd, 42, 5, 31);	/* ERASE_GRP_SIZE: 32 x 32 sectors = 512 KiB */
	emmcsim_set_bits(csd, 37, 5, 31);	/* ERASE_GRP_MULT */
	emmcsim_set_bits(csd, 32, 5, 15);	/* WP_GRP_SIZE */
	emmcsim_set_bits(csd, 31, 1, 1);	/* WP_GRP_ENABLE */
	emmcsim_set_bits(csd, 26, 3, 2);	/* R2W_FACTOR: x4 */
	emmcsim_set_bits(csd, 22, 4, 9);	/* WRITE_BL_LEN: 512 */
	emmcsim_set_crc7(csd);
}

static void build_ext_csd(u8 *e, u64 sectors)
{
	memset(e, 0, 512);
	e[504] = 0x01;				/* S_CMD_SET */
	e[EXT_CSD_HPI_FEATURES] = 0x01;		/* HPI by CMD13 */
	e[EXT_CSD_BKOPS_SUPPORT] = 0x01;
	e[501] = emmcsim_param(P_MAX_PACKED_READS);
	e[500] = emmcsim_param(P_MAX_PACKED_WRITES);
	e[EXT_CSD_DEVICE_LIFE_TIME_EST_TYP_B] = 0x01;
	e[EXT_CSD_DEVICE_LIFE_TIME_EST_TYP_A] = 0x01;
	e[EXT_CSD_PRE_EOL_INFO] = 0x01;
	e[266] = 0x04;				/* OPTIMAL_READ_SIZE: 16 KiB */
	e[265] = 0x04;				/* OPTIMAL_WRITE_SIZE: 16 KiB */
	e[264] = 0x01;				/* OPTIMAL_TRIM_UNIT_SIZE */
	e[262] = 0x01;				/* DEVICE_VERSION */
	memcpy(&e[EXT_CSD_FIRMWARE_VERSION], SIM_FW, 8);
	e[EXT_CSD_GENERIC_CMD6_TIME] = 0x19;	/* 250 ms */
	e[EXT_CSD_POWER_OFF_LONG_TIME] = 0x3c;	/* 600 ms */
	e[241] = 0x0a;				/* INI_TIMEOUT_AP: 1 s */
	e[EXT_CSD_TRIM_MULT] = 0x02;
	e[EXT_CSD_SEC_FEATURE_SUPPORT] = 0x10;	/* SEC_GB_CL_EN: TRIM */
	e[EXT_CSD_HC_ERASE_GRP_SIZE] = 0x01;	/* 512 KiB */
	e[225] = 0x06;				/* ACC_SIZE: 16 KiB */
	e[EXT_CSD_ERASE_TIMEOUT_MULT] = 0x01;
	e[EXT_CSD_REL_WR_SEC_C] = 0x01;
	e[EXT_CSD_HC_WP_GRP_SIZE] = 0x10;
	e[220] = 0x07;				/* S_C_VCC */
	e[219] = 0x07;				/* S_C_VCCQ */
	e[EXT_CSD_S_A_TIMEOUT] = 0x11;
	if (emmcsim_param(P_CMDQ_DEPTH)) {
		e[EXT_CSD_CMDQ_SUPPORT] = EXT_CSD_CMDQ_SUPPORTED;
		e[EXT_CSD_CMDQ_DEPTH] = emmcsim_param(P_CMDQ_DEPTH) - 1;
	}
	e[EXT_CSD_CACHE_SIZE + 0] = emmcsim_param(P_CACHE_KIB);	/* KiB */
	e[EXT_CSD_CACHE_SIZE + 1] = emmcsim_param(P_CACHE_KIB) >> 8;
	e[EXT_CSD_CACHE_SIZE + 2] = emmcsim_param(P_CACHE_KIB) >> 16;
	e[EXT_CSD_SEC_CNT + 0] = sectors;
	e[EXT_CSD_SEC_CNT + 1] = sectors >> 8;
	e[EXT_CSD_SEC_CNT + 2] = sectors >> 16;
	e[EXT_CSD_SEC_CNT + 3] = sectors >> 24;
	e[EXT_CSD_PART_SWITCH_TIME] = 0x01;
	e[EXT_CSD_OUT_OF_INTERRUPT_TIME] = 0x05;
	e[EXT_CSD_DRIVER_STRENGTH] = emmcsim_param(P_DRIVER_STRENGTH);
	e[EXT_CSD_CARD_TYPE] = emmcsim_card_type();	/* speed.c */
	e[EXT_CSD_STROBE_SUPPORT] = emmcsim_param(P_STROBE_SUPPORT);
	e[EXT_CSD_STRUCTURE] = 0x02;
	e[EXT_CSD_REV] = 0x08;			/* eMMC 5.1 */
	e[167] = 0x1f;				/* WR_REL_SET */
	e[EXT_CSD_WR_REL_PARAM] = 0x05;		/* HS_CTRL_REL, EN_REL_WR */
	e[EXT_CSD_PARTITION_SUPPORT] = 0x07;
	e[157] = 0x01;				/* MAX_ENH_SIZE_MULT */
}

void emmcsim_regs_init(struct emmcsim_card *card)
{
	card->sectors = (u64)emmcsim_param(P_CAPACITY_MB) * 2048;
	build_cid(card->cid);
	build_csd(card->csd);
	build_ext_csd(card->ext_csd, card->sectors);
}

/* The bytes that do not survive a power cycle (R/W/E_P and volatile). */
void emmcsim_regs_power_off(struct emmcsim_card *card)
{
	static const u8 volatile_bytes[] = {
		EXT_CSD_CMDQ_MODE_EN, EXT_CSD_POWER_OFF_NOTIFICATION, EXT_CSD_EXP_EVENTS_CTRL,
		EXT_CSD_EXP_EVENTS_STATUS, 36, 35, EXT_CSD_HPI_MGMT,
		EXT_CSD_ERASE_GROUP_DEF, EXT_CSD_BUS_WIDTH, EXT_CSD_HS_TIMING,
		EXT_CSD_POWER_CLASS, EXT_CSD_CACHE_CTRL, EXT_CSD_FLUSH_CACHE,
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(volatile_bytes); i++)
		card->ext_csd[volatile_bytes[i]] = 0;
}

/* What a host may write, and which values. */
static bool switch_allowed(struct emmcsim_host *h, u8 index, u8 value)
{
	switch (index) {
	case EXT_CSD_POWER_OFF_NOTIFICATION:
		return value <= 4;
	case EXT_CSD_EXP_EVENTS_CTRL:	/*  DYNCAP, SYSPOOL, PACKED, EXT_SEC */
		return (value & ~0x1e) == 0;
	case EXT_CSD_HPI_MGMT:
	case EXT_CSD_ERASE_GROUP_DEF:
		return value <= 1;
	case EXT_CSD_BKOPS_EN:
		return value <= 3;
	case EXT_CSD_BKOPS_START:
	case EXT_CSD_RST_N_FUNCTION:
	case EXT_CSD_POWER_CLASS:
	case 167:		/* WR_REL_SET */
	case 171:		/* USER_WP */
	case EXT_CSD_BOOT_WP:
	case 177:		/* BOOT_BUS_CONDITIONS */
	case 178:		/* BOOT_CONFIG_PROT */
		return true;
	case EXT_CSD_PART_CONFIG:	/* no boot, RPMB or GP partitions: user only */
		return (value & EXT_CSD_PART_CONFIG_ACC_MASK) == 0;
	case EXT_CSD_BUS_WIDTH:		/* the speed modes' checks: speed.c */
	case EXT_CSD_HS_TIMING:
		return emmcsim_speed_switch_ok(h, index, value);
	case EXT_CSD_CMDQ_MODE_EN:
		return emmcsim_param(P_CMDQ_DEPTH) && value <= 1;
	case EXT_CSD_CACHE_CTRL:
		return emmcsim_param(P_CACHE_KIB) && value <= 1;
	case EXT_CSD_FLUSH_CACHE:	/* FLUSH (bit 0); no barrier (BARRIER_SUPPORT 0) */
		return emmcsim_param(P_CACHE_KIB) && value <= 1;
	default:		/* read-only, or a feature this card lacks */
		return false;
	}
}

u32 emmcsim_regs_switch(struct emmcsim_host *h, u8 access, u8 index, u8 value)
{
	struct emmcsim_card *card = &h->card;
	u8 old = card->ext_csd[index], new;

	switch (access) {
	case MMC_SWITCH_MODE_CMD_SET:
		return 0;
	case MMC_SWITCH_MODE_SET_BITS:
		new = old | value;
		break;
	case MMC_SWITCH_MODE_CLEAR_BITS:
		new = old & ~value;
		break;
	default:
		new = value;
		break;
	}
	if (!switch_allowed(h, index, new)) {
		h->stats.switch_errors++;
		return R1_SWITCH_ERROR;
	}
	card->ext_csd[index] = new;
	return 0;
}
