// SPDX-License-Identifier: GPL-2.0
/*
 * emmcsim host: a platform device and driver "emmcsim" that registers an mmc_host with
 * the mmc core. .request() executes the request against the simulated card at once
 * (card.c) and completes it on an hrtimer when the timing model says the card would
 * have: no busy loop, and the guest's CPU is free meanwhile. Counters in debugfs
 * (emmcsim/stats) say what the card did.
 */
#include <linux/debugfs.h>
#include <linux/hrtimer.h>
#include <linux/ktime.h>
#include <linux/mmc/host.h>
#include <linux/mmc/mmc.h>
#include <linux/module.h>
#include <linux/platform_device.h>
#include <linux/seq_file.h>
#include <linux/version.h>

#include "emmcsim.h"

static struct platform_device *emmcsim_pdev;

/*
 * A request's time x (1 + o) x (1 + u / 1000): o is this boot's offset (drawn at load,
 * card.c), u uniform on the integers -j..j.
 */
u64 emmcsim_noise(struct emmcsim_host *h, u64 ns)
{
	u32 j = emmcsim_param(P_JITTER_PERMILLE);
	u32 k;

	if (h->card.boot_ppm)
		ns = div_u64(ns * (u64)(1000000 + h->card.boot_ppm), 1000000);
	if (!j)
		return ns;
	/* k uniform on 0..2j (the 32-bit modulo bias is < 1e-6 for j <= 500) */
	k = (u32)(emmcsim_random(&h->card) >> 32) % (2 * j + 1);
	return div_u64(ns * (1000 - j + k), 1000);
}

static enum hrtimer_restart emmcsim_done(struct hrtimer *timer)
{
	struct emmcsim_host *h = container_of(timer, struct emmcsim_host, timer);
	struct mmc_request *mrq;
	unsigned long flags;

	spin_lock_irqsave(&h->done_lock, flags);
	mrq = h->mrq;
	h->mrq = NULL;
	spin_unlock_irqrestore(&h->done_lock, flags);
	if (mrq)
		mmc_request_done(h->mmc, mrq);
	return HRTIMER_NORESTART;
}

/* The card answers nothing (stop_after): each command times out, no data moves. */
static u64 emmcsim_unanswered(struct emmcsim_host *h, struct mmc_request *mrq)
{
	if (mrq->sbc)
		mrq->sbc->error = -ETIMEDOUT;
	mrq->cmd->error = -ETIMEDOUT;
	if (mrq->data) {
		mrq->data->error = -ETIMEDOUT;
		mrq->data->bytes_xfered = 0;
	}
	if (mrq->stop)
		mrq->stop->error = -ETIMEDOUT;
	return emmcsim_cmd_ns(&h->bus, 48);
}

/* Executes the request's commands on the card; returns the model's time for them. */
static u64 emmcsim_execute(struct emmcsim_host *h, struct mmc_request *mrq)
{
	u64 ns = 0;

	if (mrq->sbc)
		ns += emmcsim_card_command(h, mrq->sbc, NULL);
	if (mrq->sbc && mrq->sbc->error)
		return ns;
	ns += emmcsim_card_command(h, mrq->cmd, mrq->data);
	/*
	 * The stop of an open-ended transfer; with CMD23, only after an error. It carries
	 * no data of its own (the transfer's result stays as it is).
	 */
	if (mrq->data && mrq->stop && (!mrq->sbc || mrq->cmd->error || mrq->data->error))
		ns += emmcsim_card_command(h, mrq->stop, NULL);
	return ns;
}

static void emmcsim_request(struct mmc_host *mmc, struct mmc_request *mrq)
{
	struct emmcsim_host *h = mmc_priv(mmc);
	unsigned long flags;
	u64 ns = 0;

	mutex_lock(&h->lock);
	h->stats.requests++;
	if (emmcsim_fault_unanswered(h))
		ns = emmcsim_unanswered(h, mrq);
	else
		ns = emmcsim_execute(h, mrq);
	ns += h->extra_ns;	/* the host's own time of a tuning (speed.c) */
	h->extra_ns = 0;
	ns = emmcsim_noise(h, ns);
	h->stats.model_ns += ns;
	mutex_unlock(&h->lock);

	spin_lock_irqsave(&h->done_lock, flags);
	WARN_ON(h->mrq);
	h->mrq = mrq;
	spin_unlock_irqrestore(&h->done_lock, flags);
	/*
	 * The card's time starts once the host has moved the data (by CPU copy, as a PIO
	 * controller would): a card with every time parameter 0 then measures exactly the
	 * software's own part of a request, which the timing model adds to (README.md).
	 */
	hrtimer_start(&h->timer, ns_to_ktime(ns), HRTIMER_MODE_REL_SOFT);
}

static void emmcsim_set_ios(struct mmc_host *mmc, struct mmc_ios *ios)
{
	struct emmcsim_host *h = mmc_priv(mmc);

	mutex_lock(&h->lock);
	if (ios->power_mode == MMC_POWER_OFF && h->bus.power_mode != MMC_POWER_OFF)
		emmcsim_card_power_off(&h->card);
	h->bus.power_mode = ios->power_mode;
	h->bus.clock = ios->clock;
	h->bus.width = 1 << ios->bus_width;	/* MMC_BUS_WIDTH_1/4/8 = 0/2/3 */
	h->bus.timing = ios->timing;
	mutex_unlock(&h->lock);
}

static int emmcsim_get_cd(struct mmc_host *mmc)
{
	return 1;
}

static int emmcsim_get_ro(struct mmc_host *mmc)
{
	return 0;
}

/*
 * Busy is over when a request completes (see card.c); an SD card switching to 1.8 V holds
 * DAT0-3 low from its CMD11 response to the host's switch (sd.c).
 */
static int emmcsim_card_busy(struct mmc_host *mmc)
{
	struct emmcsim_host *h = mmc_priv(mmc);

	return READ_ONCE(h->card.sd.switching);
}

static int emmcsim_signal_voltage(struct mmc_host *mmc, struct mmc_ios *ios)
{
	struct emmcsim_host *h = mmc_priv(mmc);
	int err;

	if (!emmcsim_sd())
		return 0;
	mutex_lock(&h->lock);
	err = emmcsim_sd_signal_voltage(h, ios);
	mutex_unlock(&h->lock);
	return err;
}

static const struct mmc_host_ops emmcsim_ops = {
	.request = emmcsim_request,
	.set_ios = emmcsim_set_ios,
	.get_cd = emmcsim_get_cd,
	.get_ro = emmcsim_get_ro,
	.card_busy = emmcsim_card_busy,
	.start_signal_voltage_switch = emmcsim_signal_voltage,
	.execute_tuning = emmcsim_execute_tuning,
};

static int emmcsim_stats_show(struct seq_file *m, void *unused)
{
	struct emmcsim_host *h = m->private;
	struct emmcsim_stats s;
	unsigned long pages;

	mutex_lock(&h->lock);
	s = h->stats;
	pages = h->card.store.nr_pages;
	mutex_unlock(&h->lock);
	seq_printf(m, "requests %llu\ncommands %llu\n", s.requests, s.commands);
	seq_printf(m, "read_cmds %llu\nread_blocks %llu\n", s.read_cmds, s.read_blocks);
	seq_printf(m, "write_cmds %llu\nwrite_blocks %llu\n", s.write_cmds, s.write_blocks);
	seq_printf(m, "packed_writes %llu\npacked_write_entries %llu\n",
		   s.packed_writes, s.packed_write_entries);
	seq_printf(m, "packed_reads %llu\npacked_read_entries %llu\n",
		   s.packed_reads, s.packed_read_entries);
	seq_printf(m, "packed_failures %llu\nswitches %llu\nerases %llu\n",
		   s.packed_failures, s.switches, s.erases);
	seq_printf(m, "model_ns %llu\nstore_pages %lu\n", s.model_ns, pages);
	seq_printf(m, "boot_offset_ppm %d\nfaults %llu\nunanswered %llu\n", h->card.boot_ppm,
		   s.faults, s.unanswered);
	seq_printf(m, "cached_writes %llu\nflushes %llu\ncache_dirty %llu\ncqe_tasks %llu\n",
		   s.cached_writes, s.flushes, h->card.cache.dirty, s.cqe_tasks);
	seq_printf(m, "erase_block_crossings %llu\npage_crossings %llu\nau_gcs %llu\n",
		   s.erase_block_crossings, s.page_crossings, s.au_gcs);
	seq_printf(m, "switch_errors %llu\ntunings %llu\ntuning_cmds %llu\ntuning_failures %llu\n",
		   s.switch_errors, s.tunings, s.tuning_cmds, s.tuning_failures);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(emmcsim_stats);

static int emmcsim_probe(struct platform_device *pdev)
{
	int width = emmcsim_param(P_BUS_WIDTH);
	struct emmcsim_host *h;
	struct mmc_host *mmc;
	int err;

	mmc = mmc_alloc_host(sizeof(*h), &pdev->dev);
	if (!mmc)
		return -ENOMEM;
	h = mmc_priv(mmc);
	h->mmc = mmc;
	mutex_init(&h->lock);
	spin_lock_init(&h->done_lock);
	h->bus.width = 1;
	err = emmcsim_card_init(&h->card);
	if (err)
		goto free;
	emmcsim_hrtimer_setup(&h->timer, emmcsim_done, HRTIMER_MODE_REL_SOFT);

	mmc->ops = &emmcsim_ops;
	mmc->f_min = 400000;
	mmc->ocr_avail = MMC_VDD_32_33 | MMC_VDD_33_34 | MMC_VDD_165_195;
	mmc->caps = MMC_CAP_CMD23 | MMC_CAP_WAIT_WHILE_BUSY | MMC_CAP_NONREMOVABLE;
	if (width >= 4)
		mmc->caps |= MMC_CAP_4_BIT_DATA;
	if (width == 8)
		mmc->caps |= MMC_CAP_8_BIT_DATA;
	mmc->caps2 = MMC_CAP2_NO_SD | MMC_CAP2_NO_SDIO;
	emmcsim_speed_host_init(mmc);	/* speed caps and f_max (speed.c) */
	if (emmcsim_sd()) {		/* the SD host's caps instead (sd.c) */
		err = emmcsim_sd_host_init(mmc);
		if (err)
			goto card;
	}
	mmc->max_segs = 128;
	mmc->max_seg_size = 512 * 1024;
	mmc->max_req_size = 512 * 1024;
	mmc->max_blk_size = 512;
	mmc->max_blk_count = 1024;

	emmcsim_cqe_init(h);
	err = mmc_add_host(mmc);
	if (err)
		goto card;
	platform_set_drvdata(pdev, h);
	h->debugfs = debugfs_create_dir(EMMCSIM_NAME, NULL);
	debugfs_create_file("stats", 0444, h->debugfs, h, &emmcsim_stats_fops);
	if (emmcsim_sd())
		dev_info(&pdev->dev,
			 "simulated SD card (SDHC), %d MiB, SCR %08x%08x, caps 0x%08x caps2 0x%08x, f_max %u Hz\n",
			 emmcsim_param(P_CAPACITY_MB), h->card.sd.scr[0], h->card.sd.scr[1],
			 mmc->caps, mmc->caps2, mmc->f_max);
	else
		dev_info(&pdev->dev,
			 "simulated eMMC 5.1, %d MiB, CARD_TYPE 0x%02x, %d-bit host, caps 0x%08x caps2 0x%08x, f_max %u Hz\n",
			 emmcsim_param(P_CAPACITY_MB), emmcsim_card_type(), width, mmc->caps,
			 mmc->caps2, mmc->f_max);
	return 0;
card:
	emmcsim_card_free(&h->card);
free:
	mmc_free_host(mmc);
	return err;
}

static void emmcsim_remove(struct platform_device *pdev)
{
	struct emmcsim_host *h = platform_get_drvdata(pdev);

	debugfs_remove_recursive(h->debugfs);
	mmc_remove_host(h->mmc);
	hrtimer_cancel(&h->timer);
	emmcsim_cqe_exit(h);
	emmcsim_card_free(&h->card);
	mmc_free_host(h->mmc);
}

#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 11, 0)
/*
 * struct platform_driver's .remove returned int before Linux 6.11 (commit 0edb555a65d1,
 * "platform: Make platform_driver::remove() return void"); the testbed's 6.1 needs this.
 */
static int emmcsim_remove_int(struct platform_device *pdev)
{
	emmcsim_remove(pdev);
	return 0;
}
#define emmcsim_remove emmcsim_remove_int
#endif

static struct platform_driver emmcsim_driver = {
	.probe = emmcsim_probe,
	.remove = emmcsim_remove,
	.driver = {
		.name = EMMCSIM_NAME,
		.probe_type = PROBE_PREFER_ASYNCHRONOUS,
	},
};

static int __init emmcsim_init(void)
{
	int err = platform_driver_register(&emmcsim_driver);

	if (err)
		return err;
	emmcsim_pdev = platform_device_register_simple(EMMCSIM_NAME, -1, NULL, 0);
	if (IS_ERR(emmcsim_pdev)) {
		platform_driver_unregister(&emmcsim_driver);
		return PTR_ERR(emmcsim_pdev);
	}
	return 0;
}

static void __exit emmcsim_exit(void)
{
	platform_device_unregister(emmcsim_pdev);
	platform_driver_unregister(&emmcsim_driver);
}

module_init(emmcsim_init);
module_exit(emmcsim_exit);

MODULE_DESCRIPTION("Simulated eMMC 5.1 card behind a software MMC host (mmcab testbed)");
MODULE_AUTHOR("mmcab developers");
MODULE_LICENSE("GPL");
MODULE_VERSION("1.0");
