/* Input for bindgen (see regenerate.sh): the MMC block ioctl ABI. */
#include <linux/ioctl.h> /* _IOWR: ioctl.h itself relies on its includer for it */
#include <linux/mmc/ioctl.h>

/*
 * MMC_IOC_CMD and MMC_IOC_MULTI_CMD are function-like macros (_IOWR(...) with sizeof),
 * which bindgen does not expand. Enumerators are evaluated by clang itself, so the
 * request numbers come out exactly as the header computes them for the target.
 */
enum mmc_ioc_request {
	MMC_IOC_CMD_REQUEST = MMC_IOC_CMD,
	MMC_IOC_MULTI_CMD_REQUEST = MMC_IOC_MULTI_CMD,
};
