/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one place for differences between the supported kernels, Debian's 6.1
 * and 6.12. Keep every version check here (and the header probes in Kbuild
 * that feed it).
 */
#ifndef _ICS_COMPAT_H
#define _ICS_COMPAT_H

#include <linux/timer.h>

/*
 * timer_shutdown_sync() came with 6.2, and to 6.1 with a stable update:
 * Debian's later bookworm kernels have it, its first ones do not (Kbuild
 * looks in the kernel's <linux/timer.h>). Every caller stops a timer that
 * nothing can arm any more, so del_timer_sync() does the same there.
 */
#ifdef ICS_NO_TIMER_SHUTDOWN
static inline int timer_shutdown_sync(struct timer_list *timer)
{
	return del_timer_sync(timer);
}
#endif

#endif /* _ICS_COMPAT_H */
