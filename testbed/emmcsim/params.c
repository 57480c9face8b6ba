// SPDX-License-Identifier: GPL-2.0
/*
 * emmcsim module parameters: one table. Every number has a unit in its name (_mb, _ns,
 * _ns_per_kib, _permille) or is a count, and a range; a value outside it is refused
 * with one line naming the parameter ("emmcsim: invalid parameter NAME=VALUE: ...").
 * The identity parameters are set at load time (0444); the timing and fault parameters
 * can also be written at run time under /sys/module/emmcsim/parameters/ (0644) and take
 * effect from the next request. README.md lists them with their defaults.
 */
#include <linux/kernel.h>
#include <linux/log2.h>
#include <linux/moduleparam.h>
#include <linux/module.h>
#include <linux/string.h>

#include "emmcsim.h"

struct emmcsim_param_def {
	const char *name;
	int value;
	int min;
	int max;
	const char *rule;	/* extra rule, said in the refusal */
	unsigned int writes;	/* successful writes, for the faults' countdowns */
};

/*
 * Defaults: the timing numbers are a calibration, not a prediction: chosen so that the
 * unpacked column of the 2012 linux-mmc packed-command post comes out near its
 * published values on Linux 7.x in the testbed (README.md, "Calibration").
 */
static struct emmcsim_param_def defs[P_COUNT] = {
	[P_CAPACITY_MB]		= { "capacity_mb", 4096, 2049, 1048576,
				    "over 2 GiB: the card is sector-addressed" },
	[P_BUS_WIDTH]		= { "bus_width", 8, 1, 8, "1, 4 or 8" },
	[P_HS200]		= { "hs200", 0, 0, 1,
				    "shorthand for card_hs200=1 host_hs200=1" },
	[P_MAX_PACKED_WRITES]	= { "max_packed_writes", 63, 0, EMMCSIM_MAX_PACKED,
				    "entries in a 512-byte header" },
	[P_MAX_PACKED_READS]	= { "max_packed_reads", 63, 0, EMMCSIM_MAX_PACKED,
				    "entries in a 512-byte header" },
	[P_STORE_LIMIT_MB]	= { "store_limit_mb", 384, 1, 65536, NULL },
	[P_SEED]		= { "seed", 1, 0, INT_MAX, NULL },
	[P_FAIL_PACKED_ENTRY]	= { "fail_packed_entry", 0, 0, EMMCSIM_MAX_PACKED, NULL },
	[P_CMD_NS]		= { "cmd_ns", 8000, 0, 100000000, NULL },
	[P_READ_ACCESS_NS]	= { "read_access_ns", 40000, 0, 1000000000, NULL },
	[P_READ_NS_PER_KIB]	= { "read_ns_per_kib", 4400, 0, 100000000, NULL },
	[P_WRITE_ACCESS_NS]	= { "write_access_ns", 1000000, 0, 1000000000, NULL },
	[P_PROGRAM_NS_PER_KIB]	= { "program_ns_per_kib", 42000, 0, 100000000, NULL },
	[P_PACKED_ENTRY_NS]	= { "packed_entry_ns", 20000, 0, 100000000, NULL },
	[P_SWITCH_NS]		= { "switch_ns", 200000, 0, 1000000000, NULL },
	[P_ERASE_NS]		= { "erase_ns", 2000000, 0, 1000000000, NULL },
	[P_JITTER_PERMILLE]	= { "jitter_permille", 20, 0, 500, NULL },
	/* Flash geometry (flash.c): sizes always there, their costs off by default. */
	[P_ERASE_BLOCK_KIB]	= { "erase_block_kib", 4096, 0, 65536,
				    "0 or a power of two" },
	[P_PAGE_KIB]		= { "page_kib", 16, 0, 65536, "0 or a power of two" },
	[P_BOUNDARY_NS]		= { "boundary_ns", 0, 0, 100000000, NULL },
	[P_PAGE_BOUNDARY_NS]	= { "page_boundary_ns", 0, 0, 100000000, NULL },
	[P_FIRST_PAGE_NS_PER_KIB] = { "first_page_ns_per_kib", 0, 0, 100000000, NULL },
	[P_OPEN_AUS]		= { "open_aus", 0, 0, EMMCSIM_MAX_OPEN_AUS, "0: no limit" },
	[P_GC_NS]		= { "gc_ns", 0, 0, 1000000000, NULL },
	[P_BOOT_OFFSET_PERMILLE] = { "boot_offset_permille", 0, 0, 200, NULL },
	/* Faults (fault.c): none by default. */
	[P_FAULT_KIND]		= { "fault_kind", 0, 0, FAULT_KINDS - 1,
				    "0 none, 1 command CRC, 2 data CRC, 3 command timeout, 4 data timeout" },
	[P_FAULT_AFTER]		= { "fault_after", 0, 0, INT_MAX, NULL },
	[P_FAULT_SECTOR]	= { "fault_sector", 0, 0, INT_MAX, NULL },
	[P_FAULT_SECTORS]	= { "fault_sectors", 0, 0, INT_MAX, NULL },
	[P_STOP_AFTER]		= { "stop_after", 0, 0, INT_MAX, NULL },
	/* The volatile cache (cache.c): none by default. */
	[P_CACHE_KIB]		= { "cache_kib", 0, 0, 65536, NULL },
	[P_CACHE_WRITE_NS]	= { "cache_write_ns", 30000, 0, 100000000, NULL },
	[P_CMDQ_DEPTH]		= { "cmdq_depth", 0, 0, EMMCSIM_MAX_TAGS,
				    "0: no command queue; the kernel uses one of 3 or more" },
	/*
	 * Speed modes (speed.c): the card's CARD_TYPE bits and the host's caps, apart, so
	 * that either can offer what the other lacks. The defaults are the HS52 card.
	 */
	[P_CARD_HS]		= { "card_hs", 1, 0, 1, "CARD_TYPE HS26 and HS52" },
	[P_CARD_DDR52]		= { "card_ddr52", 0, 0, 1, "CARD_TYPE DDR52 1.8 V/3 V" },
	[P_CARD_HS200]		= { "card_hs200", 0, 0, 1, "CARD_TYPE HS200 1.8 V" },
	[P_CARD_HS400]		= { "card_hs400", 0, 0, 1, "CARD_TYPE HS400 1.8 V" },
	[P_STROBE_SUPPORT]	= { "strobe_support", 0, 0, 1, "EXT_CSD STROBE_SUPPORT" },
	[P_DRIVER_STRENGTH]	= { "driver_strength", 0x1f, 1, 0x1f,
				    "EXT_CSD DRIVER_STRENGTH, bit 0 (type 0) set" },
	[P_HOST_HS]		= { "host_hs", 1, 0, 1, "MMC_CAP_MMC_HIGHSPEED" },
	[P_HOST_DDR]		= { "host_ddr", 0, 0, 3,
				    "1 MMC_CAP_1_8V_DDR, 2 MMC_CAP_3_3V_DDR, 3 both" },
	[P_HOST_HS200]		= { "host_hs200", 0, 0, 1, "MMC_CAP2_HS200_1_8V_SDR" },
	[P_HOST_HS400]		= { "host_hs400", 0, 0, 1, "MMC_CAP2_HS400_1_8V" },
	[P_HOST_HS400ES]	= { "host_hs400es", 0, 0, 1, "MMC_CAP2_HS400_ES" },
	[P_TUNING_CMDS]		= { "tuning_cmds", 40, 1, 255,
				    "CMD21s per tuning (sdhci's MAX_TUNING_LOOP is 40)" },
	[P_TUNING_NS]		= { "tuning_ns", 0, 0, 1000000000, NULL },
	[P_FAIL_SWITCH_TIMING]	= { "fail_switch_timing", 0, 0, 3,
				    "0 none, 1 HS, 2 HS200, 3 HS400: CMD6 to HS_TIMING fails" },
	[P_FAIL_TUNING]		= { "fail_tuning", 0, 0, 1, NULL },
	/*
	 * The SD personality (sd.c): an SDHC card on the core's SD path instead of the
	 * eMMC; whether it offers UHS-I (at 1.8 V) and CMD23 (SCR), and the host's UHS caps.
	 */
	[P_SD]			= { "sd", 0, 0, 1, "1: an SD card (SDHC) instead of the eMMC" },
	[P_SD_UHS]		= { "sd_uhs", 0, 0, 1,
				    "1: S18A, then SDR50, SDR104 and DDR50 at 1.8 V" },
	[P_SD_CMD23]		= { "sd_cmd23", 1, 0, 1, "SCR CMD_SUPPORT bit 1 (CMD23)" },
	[P_HOST_UHS]		= { "host_uhs", 0, 0, 31,
				    "bits: 1 SDR12, 2 SDR25, 4 SDR50, 8 SDR104, 16 DDR50 (MMC_CAP_UHS_*)" },
};

int emmcsim_param(enum emmcsim_param_id id)
{
	return READ_ONCE(defs[id].value);
}

unsigned int emmcsim_param_writes(enum emmcsim_param_id id)
{
	return READ_ONCE(defs[id].writes);
}

static bool emmcsim_param_ok(const struct emmcsim_param_def *d, int v)
{
	if (v < d->min || v > d->max)
		return false;
	if (d == &defs[P_BUS_WIDTH])
		return v == 1 || v == 4 || v == 8;
	if (d == &defs[P_ERASE_BLOCK_KIB] || d == &defs[P_PAGE_KIB])
		return v == 0 || is_power_of_2(v);
	if (d == &defs[P_DRIVER_STRENGTH])
		return v & 1;
	return true;
}

static int emmcsim_param_set(const char *val, const struct kernel_param *kp)
{
	struct emmcsim_param_def *d = kp->arg;
	int len = strcspn(val, "\n");
	int v;

	if (kstrtoint(val, 0, &v) || !emmcsim_param_ok(d, v)) {
		pr_err("emmcsim: invalid parameter %s=%.*s: must be an integer in %d..%d%s%s\n",
		       d->name, len, val, d->min, d->max, d->rule ? ", " : "",
		       d->rule ? d->rule : "");
		return -EINVAL;
	}
	WRITE_ONCE(d->value, v);
	WRITE_ONCE(d->writes, d->writes + 1);
	return 0;
}

static int emmcsim_param_get(char *buffer, const struct kernel_param *kp)
{
	const struct emmcsim_param_def *d = kp->arg;

	return scnprintf(buffer, PAGE_SIZE, "%d\n", READ_ONCE(d->value));
}

static const struct kernel_param_ops emmcsim_param_ops = {
	.set = emmcsim_param_set,
	.get = emmcsim_param_get,
};

#define EMMCSIM_PARAM(id, pname, perm, desc)				\
	module_param_cb(pname, &emmcsim_param_ops, &defs[id], perm);	\
	__MODULE_PARM_TYPE(pname, "int");				\
	MODULE_PARM_DESC(pname, desc)

/* The card's identity, its packed limits, the host's bus; set at load time. */
EMMCSIM_PARAM(P_CAPACITY_MB, capacity_mb, 0444,
	      "user area in MiB (SEC_COUNT), > 2048: sector-addressed");
EMMCSIM_PARAM(P_BUS_WIDTH, bus_width, 0444,
	      "data lines wired to the card, 1, 4 or 8 (host caps)");
EMMCSIM_PARAM(P_HS200, hs200, 0444,
	      "1: card and host offer HS200 (200 MHz), as card_hs200=1 host_hs200=1");
/* Speed modes (speed.c): what the card offers (EXT_CSD), what the host has (caps). */
EMMCSIM_PARAM(P_CARD_HS, card_hs, 0444,
	      "1: CARD_TYPE HS26 and HS52 (default); 0: legacy 26 MHz only");
EMMCSIM_PARAM(P_CARD_DDR52, card_ddr52, 0444,
	      "1: CARD_TYPE DDR52 at 1.8 V or 3 V (bit 2)");
EMMCSIM_PARAM(P_CARD_HS200, card_hs200, 0444,
	      "1: CARD_TYPE HS200 at 1.8 V (bit 4)");
EMMCSIM_PARAM(P_CARD_HS400, card_hs400, 0444,
	      "1: CARD_TYPE HS400 at 1.8 V (bit 6)");
EMMCSIM_PARAM(P_STROBE_SUPPORT, strobe_support, 0444,
	      "1: EXT_CSD STROBE_SUPPORT (HS400 enhanced strobe)");
EMMCSIM_PARAM(P_DRIVER_STRENGTH, driver_strength, 0444,
	      "EXT_CSD DRIVER_STRENGTH: bit n = driver type n, bit 0 set");
EMMCSIM_PARAM(P_HOST_HS, host_hs, 0444,
	      "1: host caps MMC_CAP_MMC_HIGHSPEED (default)");
EMMCSIM_PARAM(P_HOST_DDR, host_ddr, 0444,
	      "host caps: 1 MMC_CAP_1_8V_DDR, 2 MMC_CAP_3_3V_DDR, 3 both, 0 none");
EMMCSIM_PARAM(P_HOST_HS200, host_hs200, 0444,
	      "1: host caps2 MMC_CAP2_HS200_1_8V_SDR");
EMMCSIM_PARAM(P_HOST_HS400, host_hs400, 0444,
	      "1: host caps2 MMC_CAP2_HS400_1_8V");
EMMCSIM_PARAM(P_HOST_HS400ES, host_hs400es, 0444,
	      "1: host caps2 MMC_CAP2_HS400_ES (not writable in debugfs)");
/* The SD personality (sd.c, README.md "SD card"). */
EMMCSIM_PARAM(P_SD, sd, 0444,
	      "1: the card is an SD card (SDHC, SD 5.1 registers) on the core's SD path");
EMMCSIM_PARAM(P_SD_UHS, sd_uhs, 0444,
	      "1: the SD card takes 1.8 V (S18A, CMD11) and offers SDR50, SDR104, DDR50");
EMMCSIM_PARAM(P_SD_CMD23, sd_cmd23, 0444,
	      "1: the SD card's SCR offers CMD23 SET_BLOCK_COUNT (default); 0: it refuses it");
EMMCSIM_PARAM(P_HOST_UHS, host_uhs, 0444,
	      "host caps MMC_CAP_UHS_*: 1 SDR12, 2 SDR25, 4 SDR50, 8 SDR104, 16 DDR50");
EMMCSIM_PARAM(P_MAX_PACKED_WRITES, max_packed_writes, 0444,
	      "EXT_CSD MAX_PACKED_WRITES, 0..63");
EMMCSIM_PARAM(P_MAX_PACKED_READS, max_packed_reads, 0444,
	      "EXT_CSD MAX_PACKED_READS, 0..63");
EMMCSIM_PARAM(P_STORE_LIMIT_MB, store_limit_mb, 0444,
	      "most guest RAM the written data may take, MiB; writes past it fail");
EMMCSIM_PARAM(P_CACHE_KIB, cache_kib, 0444,
	      "volatile cache in KiB (EXT_CSD CACHE_SIZE), 0: none");
EMMCSIM_PARAM(P_CMDQ_DEPTH, cmdq_depth, 0444,
	      "command queue depth (EXT_CSD CMDQ_DEPTH + 1, MMC_CAP2_CQE), 0: none");
EMMCSIM_PARAM(P_SEED, seed, 0444,
	      "seed of the random numbers (this boot's offset, the jitter)");
EMMCSIM_PARAM(P_BOOT_OFFSET_PERMILLE, boot_offset_permille, 0444,
	      "every time x (1 + o), o drawn once at load, uniform in +-b/1000");
EMMCSIM_PARAM(P_FAIL_PACKED_ENTRY, fail_packed_entry, 0644,
	      "fault: entry k (1-based) of every packed write fails, 0 = none");
/* The timing model; writable at run time, like the fault above. */
EMMCSIM_PARAM(P_CMD_NS, cmd_ns, 0644,
	      "ns per command besides its bits on the CMD line");
EMMCSIM_PARAM(P_READ_ACCESS_NS, read_access_ns, 0644,
	      "ns from a read command to its first data");
EMMCSIM_PARAM(P_READ_NS_PER_KIB, read_ns_per_kib, 0644,
	      "ns per KiB read from flash, besides the bus");
EMMCSIM_PARAM(P_WRITE_ACCESS_NS, write_access_ns, 0644,
	      "ns per write command");
EMMCSIM_PARAM(P_PROGRAM_NS_PER_KIB, program_ns_per_kib, 0644,
	      "ns per KiB programmed, besides the bus");
EMMCSIM_PARAM(P_PACKED_ENTRY_NS, packed_entry_ns, 0644,
	      "ns per entry of a packed command");
EMMCSIM_PARAM(P_SWITCH_NS, switch_ns, 0644, "ns busy after a CMD6 SWITCH");
EMMCSIM_PARAM(P_ERASE_NS, erase_ns, 0644, "ns busy per CMD38 ERASE");
EMMCSIM_PARAM(P_JITTER_PERMILLE, jitter_permille, 0644,
	      "each request's time x (1 + u/1000), u uniform in [-j, +j]");
/* Flash geometry (flash.c); writable at run time, the open-unit list restarts. */
EMMCSIM_PARAM(P_ERASE_BLOCK_KIB, erase_block_kib, 0644,
	      "erase block (allocation unit) in KiB, 0 or a power of two; 0: none");
EMMCSIM_PARAM(P_PAGE_KIB, page_kib, 0644,
	      "flash page in KiB, 0 or a power of two; 0: none");
EMMCSIM_PARAM(P_BOUNDARY_NS, boundary_ns, 0644,
	      "ns per erase-block boundary a read or write crosses");
EMMCSIM_PARAM(P_PAGE_BOUNDARY_NS, page_boundary_ns, 0644,
	      "ns per page boundary (not an erase-block one) a transfer crosses");
EMMCSIM_PARAM(P_FIRST_PAGE_NS_PER_KIB, first_page_ns_per_kib, 0644,
	      "ns per KiB of a read inside its first page, before any data is on the bus");
EMMCSIM_PARAM(P_OPEN_AUS, open_aus, 0644,
	      "erase blocks the card keeps open for writing, 0..32; 0: no limit");
EMMCSIM_PARAM(P_GC_NS, gc_ns, 0644,
	      "ns to close an open unit when a write opens one more than open_aus");
/* Faults (fault.c); writable at run time, each write re-arms its countdown. */
EMMCSIM_PARAM(P_FAULT_KIND, fault_kind, 0644,
	      "what a faulted data command gets: 0 none, 1 command CRC, 2 data CRC, 3 command timeout, 4 data timeout");
EMMCSIM_PARAM(P_FAULT_AFTER, fault_after, 0644,
	      "N > 0: the Nth data command from this write faults, once");
EMMCSIM_PARAM(P_FAULT_SECTOR, fault_sector, 0644,
	      "first sector of the range whose data commands fault");
EMMCSIM_PARAM(P_FAULT_SECTORS, fault_sectors, 0644,
	      "sectors in that range, 0: none");
EMMCSIM_PARAM(P_STOP_AFTER, stop_after, 0644,
	      "N > 0: after N more requests the card answers nothing; 0: it answers");
EMMCSIM_PARAM(P_CACHE_WRITE_NS, cache_write_ns, 0644,
	      "ns per write command taken into the cache, besides the bus");
/* Tuning (speed.c); writable at run time, from the next tuning. */
EMMCSIM_PARAM(P_TUNING_CMDS, tuning_cmds, 0644,
	      "CMD21s the host sends per tuning (its tap sweep), 1..255");
EMMCSIM_PARAM(P_TUNING_NS, tuning_ns, 0644,
	      "ns per tuning besides its CMD21s (the host's tap settings)");
EMMCSIM_PARAM(P_FAIL_SWITCH_TIMING, fail_switch_timing, 0644,
	      "fault: CMD6 to HS_TIMING with this timing fails (1 HS, 2 HS200, 3 HS400), 0 none");
EMMCSIM_PARAM(P_FAIL_TUNING, fail_tuning, 0644,
	      "fault: 1: the card's CMD21 blocks are wrong, every tuning fails");
