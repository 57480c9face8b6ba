// SPDX-License-Identifier: GPL-2.0
/*
 * emmcsim command queue (README.md, "Command queue"): with cmdq_depth > 0 the card has
 * CMDQ_SUPPORT and CMDQ_DEPTH in EXT_CSD and the host offers MMC_CAP2_CQE with these
 * mmc_cqe_ops, a software command queue engine: the mmc core enables the card's queue
 * at init (CMDQ_MODE_EN) and mmc_block queues data tasks (no DCMD: flushes go through
 * ->request with the queue off, as the core does for hosts without MMC_CAP2_CQE_DCMD).
 *
 * A task is executed at once against the card (as CMD46/47 after its CMD44/45, which
 * cost two more commands) and completes when the model says: the card has two
 * resources, the flash and the bus, each serving its tasks in order. A read occupies
 * the flash (its time besides the bus), then the bus; a write the bus, then the flash.
 * So queued tasks overlap: one's flash time runs while another moves its data.
 */
#include <linux/hrtimer.h>
#include <linux/ktime.h>
#include <linux/minmax.h>
#include <linux/mmc/mmc.h>
#include <linux/wait.h>

#include "emmcsim.h"

/*
 * A task's end: the request is completed first, then a ->cqe_wait_for_idle() waiter is
 * woken, as cqhci does (drivers/mmc/host/cqhci-core.c, cqhci_irq(): cqhci_finish_mrq()
 * calls mmc_cqe_request_done() for every completed tag, then wakes wait_queue once qcnt
 * is 0). Woken first, the waiter (the core, about to send a command with the engine
 * off, or removing the host) could run while the completion is still under way.
 */
static enum hrtimer_restart emmcsim_task_done(struct hrtimer *timer)
{
	struct emmcsim_task *t = container_of(timer, struct emmcsim_task, timer);
	struct emmcsim_host *h = t->h;
	struct mmc_request *mrq;
	unsigned long flags;
	bool idle;

	spin_lock_irqsave(&h->done_lock, flags);
	mrq = t->mrq;
	t->mrq = NULL;	/* before the completion: the tag may be reused at once */
	spin_unlock_irqrestore(&h->done_lock, flags);
	if (mrq)
		mmc_cqe_request_done(h->mmc, mrq);
	spin_lock_irqsave(&h->done_lock, flags);
	if (mrq)
		h->cqe.inflight--;
	idle = !h->cqe.inflight;
	spin_unlock_irqrestore(&h->done_lock, flags);
	if (idle)
		wake_up(&h->cqe.idle);
	return HRTIMER_NORESTART;
}

static int emmcsim_cqe_enable(struct mmc_host *mmc, struct mmc_card *card)
{
	/* As cqhci: no engine for a card whose queue is off (no host software queue). */
	return card->ext_csd.cmdq_en ? 0 : -EINVAL;
}

static int emmcsim_cqe_wait_for_idle(struct mmc_host *mmc)
{
	struct emmcsim_host *h = mmc_priv(mmc);

	wait_event(h->cqe.idle, !READ_ONCE(h->cqe.inflight));
	return 0;
}

static void emmcsim_cqe_disable(struct mmc_host *mmc)
{
	emmcsim_cqe_wait_for_idle(mmc);
}

static void emmcsim_cqe_off(struct mmc_host *mmc)
{
	mmc->cqe_on = false;
}

/* The task's time, split over the two resources; returns when it completes (ns). */
static u64 emmcsim_task_schedule(struct emmcsim_host *h, bool write, u64 ns, u64 bus)
{
	struct emmcsim_cqe *c = &h->cqe;
	u64 now = ktime_get_ns(), flash = ns > bus ? ns - bus : 0, start;

	if (write) {
		start = max(now, c->bus_free_ns);
		c->bus_free_ns = start + bus;
		start = max(c->bus_free_ns, c->flash_free_ns);
		c->flash_free_ns = start + flash;
		return c->flash_free_ns;
	}
	start = max(now, c->flash_free_ns);
	c->flash_free_ns = start + flash;
	start = max(c->flash_free_ns, c->bus_free_ns);
	c->bus_free_ns = start + bus;
	return c->bus_free_ns;
}

static int emmcsim_cqe_request(struct mmc_host *mmc, struct mmc_request *mrq)
{
	struct emmcsim_host *h = mmc_priv(mmc);
	struct mmc_data *data = mrq->data;
	struct mmc_command cmd = { .flags = MMC_RSP_R1 | MMC_CMD_ADTC };
	struct emmcsim_task *t;
	unsigned long flags;
	bool write;
	u64 ns, done;

	/* No DCMD: MMC_CAP2_CQE_DCMD is not offered. */
	if (!data || mrq->tag < 0 || mrq->tag >= EMMCSIM_MAX_TAGS)
		return -EINVAL;
	t = &h->cqe.task[mrq->tag];
	write = data->flags & MMC_DATA_WRITE;
	mmc->cqe_on = true;
	mutex_lock(&h->lock);
	h->stats.requests++;
	h->stats.cqe_tasks++;
	if (emmcsim_fault_unanswered(h) || !(h->card.ext_csd[EXT_CSD_CMDQ_MODE_EN] & 1)) {
		/* CMD44 unanswered, or illegal with the card's queue off */
		data->error = -ETIMEDOUT;
		data->bytes_xfered = 0;
		ns = emmcsim_cmd_ns(&h->bus, 48);
	} else {
		cmd.opcode = write ? MMC_WRITE_MULTIPLE_BLOCK : MMC_READ_MULTIPLE_BLOCK;
		cmd.arg = data->blk_addr;
		ns = emmcsim_card_command(h, &cmd, data) + 2 * emmcsim_cmd_ns(&h->bus, 48);
		if (cmd.error && !data->error)
			data->error = cmd.error;
	}
	ns = emmcsim_noise(h, ns);
	done = emmcsim_task_schedule(h, write, ns,
				     emmcsim_bus_ns(&h->bus, data->blksz, data->blocks));
	h->stats.model_ns += ns;
	mutex_unlock(&h->lock);

	spin_lock_irqsave(&h->done_lock, flags);
	WARN_ON(t->mrq);
	t->mrq = mrq;
	h->cqe.inflight++;
	spin_unlock_irqrestore(&h->done_lock, flags);
	hrtimer_start(&t->timer, ns_to_ktime(done), HRTIMER_MODE_ABS_SOFT);
	return 0;
}

static void emmcsim_cqe_post_req(struct mmc_host *mmc, struct mmc_request *mrq)
{
}

static bool emmcsim_cqe_timeout(struct mmc_host *mmc, struct mmc_request *mrq,
				bool *recovery_needed)
{
	/* Every task completes on its timer: a late one is not lost. */
	*recovery_needed = false;
	return false;
}

static void emmcsim_cqe_recovery_start(struct mmc_host *mmc)
{
}

/* Completes every task still queued, with nothing transferred. */
static void emmcsim_cqe_recovery_finish(struct mmc_host *mmc)
{
	struct emmcsim_host *h = mmc_priv(mmc);
	unsigned int i;

	for (i = 0; i < EMMCSIM_MAX_TAGS; i++) {
		struct emmcsim_task *t = &h->cqe.task[i];

		if (hrtimer_cancel(&t->timer) && t->mrq) {
			t->mrq->data->bytes_xfered = 0;
			emmcsim_task_done(&t->timer);
		}
	}
	mmc->cqe_on = false;
}

static const struct mmc_cqe_ops emmcsim_cqe_ops = {
	.cqe_enable = emmcsim_cqe_enable,
	.cqe_disable = emmcsim_cqe_disable,
	.cqe_request = emmcsim_cqe_request,
	.cqe_post_req = emmcsim_cqe_post_req,
	.cqe_off = emmcsim_cqe_off,
	.cqe_wait_for_idle = emmcsim_cqe_wait_for_idle,
	.cqe_timeout = emmcsim_cqe_timeout,
	.cqe_recovery_start = emmcsim_cqe_recovery_start,
	.cqe_recovery_finish = emmcsim_cqe_recovery_finish,
};

void emmcsim_cqe_init(struct emmcsim_host *h)
{
	unsigned int i, depth = emmcsim_param(P_CMDQ_DEPTH);

	init_waitqueue_head(&h->cqe.idle);
	for (i = 0; i < EMMCSIM_MAX_TAGS; i++) {
		h->cqe.task[i].h = h;
		emmcsim_hrtimer_setup(&h->cqe.task[i].timer, emmcsim_task_done,
				      HRTIMER_MODE_ABS_SOFT);
	}
	if (!depth)
		return;
	h->mmc->caps2 |= MMC_CAP2_CQE;
	h->mmc->cqe_ops = &emmcsim_cqe_ops;
	h->mmc->cqe_qdepth = depth;
}

void emmcsim_cqe_exit(struct emmcsim_host *h)
{
	unsigned int i;

	for (i = 0; i < EMMCSIM_MAX_TAGS; i++)
		hrtimer_cancel(&h->cqe.task[i].timer);
}
