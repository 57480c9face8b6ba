/* SPDX-License-Identifier: GPL-2.0 */
/*
 * emmcsim: a software MMC host with a simulated eMMC 5.1 card behind it.
 *
 * The host registers a struct mmc_host with the real mmc core; the core attaches the
 * card through its ordinary commands (CMD0, CMD1, CMD2, ... CMD6, CMD8) and mmc_block,
 * the ioctl path, debugfs and sysfs are the kernel's own. Only the controller and the
 * card are simulated: every command is executed here against a RAM-backed (sparse)
 * store and completed on an hrtimer after the time the timing model gives it
 * (README.md, "Timing model").
 */
#ifndef EMMCSIM_H
#define EMMCSIM_H

#include <linux/hrtimer.h>
#include <linux/mmc/core.h>
#include <linux/mmc/host.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/version.h>
#include <linux/wait.h>
#include <linux/xarray.h>

#define EMMCSIM_NAME "emmcsim"

/* hrtimer_setup() replaced hrtimer_init() + ->function in Linux 6.13. */
static inline void emmcsim_hrtimer_setup(struct hrtimer *timer,
					 enum hrtimer_restart (*fn)(struct hrtimer *),
					 enum hrtimer_mode mode)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 13, 0)
	hrtimer_setup(timer, fn, CLOCK_MONOTONIC, mode);
#else
	hrtimer_init(timer, CLOCK_MONOTONIC, mode);
	timer->function = fn;
#endif
}

/* Module parameters (params.c): one table, every number with its unit and range. */
enum emmcsim_param_id {
	P_CAPACITY_MB,
	P_BUS_WIDTH,
	P_HS200,
	P_MAX_PACKED_WRITES,
	P_MAX_PACKED_READS,
	P_STORE_LIMIT_MB,
	P_SEED,
	P_FAIL_PACKED_ENTRY,
	P_CMD_NS,
	P_READ_ACCESS_NS,
	P_READ_NS_PER_KIB,
	P_WRITE_ACCESS_NS,
	P_PROGRAM_NS_PER_KIB,
	P_PACKED_ENTRY_NS,
	P_SWITCH_NS,
	P_ERASE_NS,
	P_JITTER_PERMILLE,
	P_ERASE_BLOCK_KIB,
	P_PAGE_KIB,
	P_BOUNDARY_NS,
	P_PAGE_BOUNDARY_NS,
	P_FIRST_PAGE_NS_PER_KIB,
	P_OPEN_AUS,
	P_GC_NS,
	P_BOOT_OFFSET_PERMILLE,
	P_FAULT_KIND,
	P_FAULT_AFTER,
	P_FAULT_SECTOR,
	P_FAULT_SECTORS,
	P_STOP_AFTER,
	P_CACHE_KIB,
	P_CACHE_WRITE_NS,
	P_CMDQ_DEPTH,
	/* Speed modes (README.md, "Speed modes"): what the card offers, what the host has. */
	P_CARD_HS,
	P_CARD_DDR52,
	P_CARD_HS200,
	P_CARD_HS400,
	P_STROBE_SUPPORT,
	P_DRIVER_STRENGTH,
	P_HOST_HS,
	P_HOST_DDR,
	P_HOST_HS200,
	P_HOST_HS400,
	P_HOST_HS400ES,
	P_TUNING_CMDS,
	P_TUNING_NS,
	P_FAIL_SWITCH_TIMING,
	P_FAIL_TUNING,
	/* The SD personality (sd.c, README.md "SD card"). */
	P_SD,
	P_SD_UHS,
	P_SD_CMD23,
	P_HOST_UHS,
	P_COUNT
};

int emmcsim_param(enum emmcsim_param_id id);
/* How many times the parameter was written: a fault re-arms on every write. */
unsigned int emmcsim_param_writes(enum emmcsim_param_id id);

/* fault_kind: what a faulted data command gets (fault.c). */
enum emmcsim_fault_kind {
	FAULT_NONE,
	FAULT_CMD_CRC,		/* -EILSEQ on the command: not executed */
	FAULT_DATA_CRC,		/* -EILSEQ on the data: nothing programmed or delivered */
	FAULT_CMD_TIMEOUT,	/* -ETIMEDOUT on the command: not executed */
	FAULT_DATA_TIMEOUT,	/* -ETIMEDOUT on the data: not executed */
	FAULT_KINDS
};

/* The card's memory: 4 KiB pages allocated on first write; unwritten reads as zero. */
struct emmcsim_store {
	struct xarray pages;
	unsigned long nr_pages;
	unsigned long limit_pages;
};

int emmcsim_store_init(struct emmcsim_store *s, unsigned long limit_pages);
void emmcsim_store_free(struct emmcsim_store *s);
/* Copy len bytes between the store at byte address addr and an sg list at skip. */
int emmcsim_store_write(struct emmcsim_store *s, u64 addr, struct scatterlist *sg,
			unsigned int sg_len, size_t skip, size_t len);
int emmcsim_store_read(struct emmcsim_store *s, u64 addr, struct scatterlist *sg,
		       unsigned int sg_len, size_t skip, size_t len);
void emmcsim_store_discard(struct emmcsim_store *s, u64 addr, u64 len);

/* Counters, shown in debugfs (emmcsim/stats): what the card did, for tests. */
struct emmcsim_stats {
	u64 commands;
	u64 requests;
	u64 read_cmds;
	u64 write_cmds;
	u64 read_blocks;
	u64 write_blocks;
	u64 packed_writes;
	u64 packed_write_entries;
	u64 packed_reads;
	u64 packed_read_entries;
	u64 packed_failures;
	u64 switches;
	u64 erases;
	u64 model_ns;
	u64 erase_block_crossings;
	u64 page_crossings;
	u64 au_gcs;
	u64 faults;
	u64 unanswered;
	u64 cached_writes;
	u64 flushes;
	u64 cqe_tasks;
	u64 switch_errors;
	u64 tunings;
	u64 tuning_cmds;
	u64 tuning_failures;
};

#define EMMCSIM_MAX_TAGS 32

/* A queued task of the command queue (cqe.c), completed by its own timer. */
struct emmcsim_task {
	struct emmcsim_host *h;
	struct mmc_request *mrq;
	struct hrtimer timer;
};

struct emmcsim_cqe {
	struct emmcsim_task task[EMMCSIM_MAX_TAGS];
	unsigned int inflight;		/* under done_lock */
	wait_queue_head_t idle;
	u64 bus_free_ns;		/* when the bus, and the flash, finish their tasks */
	u64 flash_free_ns;
};

/* The faults' state: countdowns armed by writes of their parameters (fault.c). */
struct emmcsim_faults {
	unsigned int after_writes;	/* emmcsim_param_writes(P_FAULT_AFTER) seen */
	unsigned int after_left;	/* data commands until the fault, 0: none armed */
	unsigned int stop_writes;
	unsigned int stop_left;		/* requests until the card stops answering */
	bool stopped;
};

#define EMMCSIM_MAX_PACKED 63

/* Packed commands (JESD84-B51 6.6.29; EXT_CSD bytes as Linux 3.7-4.9 named them). */
#define EXT_CSD_PACKED_FAILURE_INDEX	35
#define EXT_CSD_PACKED_CMD_STATUS	36
#define PACKED_GENERIC_ERROR		BIT(0)
#define PACKED_INDEXED_ERROR		BIT(1)
#define PACKED_FAILURE_EVENT		BIT(3)	/* EXCEPTION_EVENTS_STATUS/CTRL */
#define CMD23_PACKED			BIT(30)
#define PACKED_HDR_VERSION		1
#define PACKED_HDR_READ			1
#define PACKED_HDR_WRITE		2

struct emmcsim_packed_entry {
	u32 blocks;
	u32 addr;
};

#define EMMCSIM_MAX_OPEN_AUS 32

/*
 * The allocation units (erase blocks) the card keeps open for writing, least recently
 * written evicted first (flash.c). Reset when erase_block_kib or open_aus change.
 */
struct emmcsim_open_aus {
	u64 erase_block;	/* bytes, as when the list was built */
	unsigned int limit;	/* open_aus, as when the list was built */
	unsigned int n;
	u64 clock;
	u64 au[EMMCSIM_MAX_OPEN_AUS];
	u64 used[EMMCSIM_MAX_OPEN_AUS];
};

/* The volatile cache's state (cache.c): bytes not yet on flash, as of clock_ns. */
struct emmcsim_cache {
	u64 dirty;
	u64 clock_ns;
};

/* The SD personality's state (sd.c): what an SD card keeps besides an eMMC's. */
struct emmcsim_sd {
	bool app;		/* CMD55 answered: the next command is an ACMD */
	bool if_cond;		/* CMD8 answered since CMD0: HCS is honoured */
	unsigned int busy_left;	/* ACMD41s still answered busy, from the first one */
	bool v18;		/* 1.8 V signalling, after CMD11 (until power off) */
	bool switching;		/* CMD11 answered, the host's switch to 1.8 V not yet made */
	u8 width;		/* ACMD6: 0 one data line, 2 four */
	u8 func[6];		/* CMD6: the function of each group, 1 to 6 */
	u32 written;		/* blocks the last write command wrote, for ACMD22 */
	u32 scr[2];		/* SCR, word 0 = bits 63:32 */
};

/* The card: its registers, state machine and store. */
struct emmcsim_card {
	u32 cid[4];
	u32 csd[4];
	u8 ext_csd[512];
	u32 ocr;
	u16 rca;
	u32 state;		/* R1_STATE_* */
	u32 pending;		/* clear-on-read R1 bits for the next response */
	bool sleeping;
	u32 sbc_arg;		/* CMD23 argument for the next data command, if sbc_set */
	bool sbc_set;
	/* A packed read announced by its header (CMD23 packed + CMD25), for the CMD18. */
	unsigned int packed_read_n;
	struct emmcsim_packed_entry packed_read[EMMCSIM_MAX_PACKED];
	u32 erase_start;
	u32 erase_end;
	u64 sectors;
	struct emmcsim_store store;
	struct emmcsim_open_aus open_aus;
	struct emmcsim_cache cache;
	u64 rng;
	s32 boot_ppm;		/* this boot's offset, parts per million, drawn at load */
	struct emmcsim_sd sd;	/* with sd=1 */
};

/* What the core set with set_ios: the bus the timing model moves data over. */
struct emmcsim_bus {
	unsigned int clock;	/* Hz */
	unsigned int width;	/* data lines: 1, 4, 8 */
	unsigned char timing;	/* MMC_TIMING_* */
	unsigned char power_mode;
};

struct emmcsim_host {
	struct mmc_host *mmc;
	struct mutex lock;	/* card state, store, stats */
	spinlock_t done_lock;
	struct mmc_request *mrq;
	struct hrtimer timer;
	struct emmcsim_card card;
	struct emmcsim_bus bus;
	struct emmcsim_stats stats;
	struct emmcsim_faults faults;
	struct emmcsim_cqe cqe;
	u64 extra_ns;		/* host time added to the next request (tuning_ns) */
	struct dentry *debugfs;
};

/*
 * An error the host reports, counted in the host's debugfs err_stats as sdhci counts
 * it (sdhci_err_stats_inc() in drivers/mmc/host/sdhci.c: a command timeout
 * MMC_ERR_CMD_TIMEOUT, a command CRC error MMC_ERR_CMD_CRC, a data timeout
 * MMC_ERR_DAT_TIMEOUT, a data CRC error MMC_ERR_DAT_CRC; CRC errors of a tuning command
 * are not counted). mmc_debugfs_err_stats_inc(): include/linux/mmc/host.h.
 */
static inline void emmcsim_err(struct emmcsim_host *h, enum mmc_err_stat stat)
{
	mmc_debugfs_err_stats_inc(h->mmc, stat);
}

/* card.c */
u64 emmcsim_random(struct emmcsim_card *card);
int emmcsim_card_init(struct emmcsim_card *card);
void emmcsim_card_free(struct emmcsim_card *card);
void emmcsim_card_power_off(struct emmcsim_card *card);
/* Executes one command (and its data); returns the model's time for it in ns. */
u64 emmcsim_card_command(struct emmcsim_host *h, struct mmc_command *cmd,
			 struct mmc_data *data);

u64 emmcsim_per_kib(enum emmcsim_param_id id, u64 bytes);
bool emmcsim_card_range_ok(const struct emmcsim_card *card, u64 sector, u64 blocks);
/* The parts of the command set an SD card shares with the eMMC (sd.c uses them). */
u32 emmcsim_card_r1(struct emmcsim_card *card, u32 state);
u64 emmcsim_card_data(struct emmcsim_host *h, struct mmc_command *cmd,
		      struct mmc_data *data, bool write);
u64 emmcsim_card_erase(struct emmcsim_host *h, u32 arg);
unsigned int emmcsim_resp_bits(const struct mmc_command *cmd);

/* packed.c: the data of a packed CMD25 (its header first) and of a packed CMD18. */
u64 emmcsim_packed_write(struct emmcsim_host *h, struct mmc_data *data, u32 count);
u64 emmcsim_packed_read(struct emmcsim_host *h, struct mmc_data *data, u32 count);

/* regs.c: the card's identity (CID, CSD, EXT_CSD) from the parameters. */
void emmcsim_regs_init(struct emmcsim_card *card);
/* CMD6 SWITCH of EXT_CSD byte index: 0, or the R1 bits of the refusal. */
u32 emmcsim_regs_switch(struct emmcsim_host *h, u8 access, u8 index, u8 value);
void emmcsim_regs_power_off(struct emmcsim_card *card);
/* Bits [start + size - 1 : start] of a 128-bit register; its CRC7 in bits 7:0. */
void emmcsim_set_bits(u32 reg[4], unsigned int start, unsigned int size, u32 value);
void emmcsim_set_crc7(u32 reg[4]);

/* host.c: a time with the model's noise (this boot's offset, the jitter). */
u64 emmcsim_noise(struct emmcsim_host *h, u64 ns);

/* cqe.c: the command queue engine (cmdq_depth > 0). */
void emmcsim_cqe_init(struct emmcsim_host *h);
void emmcsim_cqe_exit(struct emmcsim_host *h);

/* fault.c: whether the card answers this request; the fault of a data command. */
bool emmcsim_fault_unanswered(struct emmcsim_host *h);
enum emmcsim_fault_kind emmcsim_fault_data(struct emmcsim_host *h, u32 sector, u32 blocks);

/* cache.c: the volatile cache (CACHE_SIZE, CACHE_CTRL, FLUSH_CACHE). */
bool emmcsim_cache_on(const struct emmcsim_card *card);
u64 emmcsim_cache_write_ns(struct emmcsim_host *h, u64 len);
u64 emmcsim_cache_flush_ns(struct emmcsim_host *h);

/* flash.c: the geometry's costs for a transfer of len bytes at byte address addr. */
u64 emmcsim_flash_boundary_ns(struct emmcsim_host *h, u64 addr, u64 len);
u64 emmcsim_flash_write_ns(struct emmcsim_host *h, u64 addr, u64 len);
/* flash.c: a read's first page, out of the die before its first block is on the bus. */
u64 emmcsim_flash_first_page_ns(u64 addr, u64 len);

/* speed.c: the speed modes, CMD21 and the host's tuning. */
u8 emmcsim_card_type(void);
void emmcsim_speed_host_init(struct mmc_host *mmc);
bool emmcsim_speed_switch_ok(struct emmcsim_host *h, u8 index, u8 value);
u64 emmcsim_tuning_block(struct emmcsim_host *h, struct mmc_command *cmd,
			 struct mmc_data *data);
int emmcsim_execute_tuning(struct mmc_host *mmc, u32 opcode);
/* The tuning block into data: 128 bytes when wide (8 lines), else 64; the data's time. */
u64 emmcsim_tuning_send(struct emmcsim_host *h, struct mmc_data *data, bool wide);

/* sd.c: the SD personality (sd=1). */
static inline bool emmcsim_sd(void)
{
	return emmcsim_param(P_SD);
}

int emmcsim_sd_host_init(struct mmc_host *mmc);
void emmcsim_sd_regs_init(struct emmcsim_card *card);
void emmcsim_sd_power_off(struct emmcsim_card *card);
u64 emmcsim_sd_command(struct emmcsim_host *h, struct mmc_command *cmd,
		       struct mmc_data *data);
int emmcsim_sd_signal_voltage(struct emmcsim_host *h, struct mmc_ios *ios);

/* timing */
u64 emmcsim_cmd_ns(const struct emmcsim_bus *bus, unsigned int resp_bits);
u64 emmcsim_bus_ns(const struct emmcsim_bus *bus, unsigned int blksz, unsigned int blocks);

#endif
