/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one place for differences between the supported kernels, Debian's 6.1
 * and 6.12. Keep every version check here.
 */
#ifndef _ICS_COMPAT_H
#define _ICS_COMPAT_H

#include <linux/version.h>
#include <linux/netlink.h>

/*
 * 6.3 added formatted extended-ack messages. On older kernels the message
 * is the format string's fixed prefix, passed in separately.
 */
#ifdef NL_SET_ERR_MSG_FMT_MOD
#define ics_extack(extack, fixed, fmt, ...) do {			\
	(void)(fixed);							\
	NL_SET_ERR_MSG_FMT_MOD(extack, fmt, ##__VA_ARGS__);		\
} while (0)
#else
#define ics_extack(extack, fixed, fmt, ...) do {			\
	(void)(fmt);							\
	NL_SET_ERR_MSG_MOD(extack, fixed);				\
} while (0)
#endif

#endif /* _ICS_COMPAT_H */
