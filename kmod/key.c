// SPDX-License-Identifier: GPL-2.0
/*
 * Cluster keys of an instance (design.rst, "Cluster key"): up to
 * ICS_KEYS_MAX installed at once, each under an id (1..255) that frames
 * carry; one of them, key_tx, signs what we send; the authentication mode
 * says what we accept. Changes come from generic netlink (netns admin)
 * under RTNL; the data path reads the slots under RCU. A key is never
 * dumped: GET_INSTANCE shows its id and a fingerprint (keyed BLAKE2s of a
 * constant), which tells members whether they hold the same key and
 * nothing about it. Memory that held a key is wiped when it is freed.
 */
#include <crypto/blake2s.h>
#include <linux/rtnetlink.h>
#include <linux/slab.h>
#include <net/netlink.h>

#include "ics.h"

/* RTNL: the slot of key @id, or -1. */
static int ics_key_slot(struct ics_net *in, u8 id)
{
	struct ics_key *k;
	int i;

	for (i = 0; i < ICS_KEYS_MAX; i++) {
		k = rtnl_dereference(in->keys[i]);
		if (k && k->id == id)
			return i;
	}
	return -1;
}

/* Install @key (ICS_AUTH_KEY_LEN bytes) as @id. RTNL. */
int ics_key_add(struct ics_net *in, u8 id, const u8 *key, struct netlink_ext_ack *extack)
{
	static const char label[] = "ics key fingerprint";
	u8 fpr[BLAKE2S_HASH_SIZE];
	struct ics_key *k;
	int i, free = -1;

	ASSERT_RTNL();
	if (!ics_auth_available()) {
		NL_SET_ERR_MSG_MOD(extack, "no poly1305 in this kernel (fips=1?): no authentication");
		return -EOPNOTSUPP;
	}
	if (!id) {
		NL_SET_ERR_MSG_MOD(extack, "key id 0 means no key: use 1..255");
		return -EINVAL;
	}
	if (ics_key_slot(in, id) >= 0) {
		NL_SET_ERR_MSG_MOD(extack, "a key with this id is installed: delete it first");
		return -EEXIST;
	}
	for (i = 0; i < ICS_KEYS_MAX && free < 0; i++)
		if (!rtnl_dereference(in->keys[i]))
			free = i;
	if (free < 0) {
		NL_SET_ERR_MSG_MOD(extack, "as many keys as allowed are installed");
		return -ENOSPC;
	}
	k = kzalloc(sizeof(*k), GFP_KERNEL_ACCOUNT);
	if (!k)
		return -ENOMEM;
	k->id = id;
	k->gen = ++in->key_gen;
	memcpy(k->key, key, ICS_AUTH_KEY_LEN);
	blake2s(fpr, label, key, sizeof(fpr), sizeof(label) - 1, ICS_AUTH_KEY_LEN);
	memcpy(k->fpr, fpr, sizeof(k->fpr));
	rcu_assign_pointer(in->keys[free], k);
	return 0;
}

/* Remove key @id; not the one we sign with. RTNL. */
int ics_key_del(struct ics_net *in, u8 id, struct netlink_ext_ack *extack)
{
	struct ics_key *k;
	int i;

	ASSERT_RTNL();
	i = ics_key_slot(in, id);
	if (i < 0) {
		NL_SET_ERR_MSG_MOD(extack, "no key with this id");
		return -ENOENT;
	}
	if (in->key_tx == id) {
		NL_SET_ERR_MSG_MOD(extack, "the key in use: use another one first");
		return -EBUSY;
	}
	k = rtnl_dereference(in->keys[i]);
	RCU_INIT_POINTER(in->keys[i], NULL);
	/* no frame checks with it now, so none caches a key derived from it */
	synchronize_net();
	ics_auth_forget(in, k->gen);
	kfree_sensitive(k);
	return 0;
}

/* Sign what we send with key @id, or with none (0). RTNL. */
int ics_key_use(struct ics_net *in, u8 id, struct netlink_ext_ack *extack)
{
	ASSERT_RTNL();
	if (id && ics_key_slot(in, id) < 0) {
		NL_SET_ERR_MSG_MOD(extack, "no key with this id");
		return -ENOENT;
	}
	if (!id && in->auth_mode != ICS_AUTH_OFF) {
		NL_SET_ERR_MSG_MOD(extack, "authentication is on: set it off first");
		return -EBUSY;
	}
	WRITE_ONCE(in->key_tx, id);
	ics_auth_txkey_update(in, rtnl_dereference(in->bind));
	return 0;
}

/* The authentication mode; accept and require need a key in use. RTNL. */
int ics_auth_set_mode(struct ics_net *in, u8 mode, struct netlink_ext_ack *extack)
{
	ASSERT_RTNL();
	if (mode != ICS_AUTH_OFF && !in->key_tx) {
		NL_SET_ERR_MSG_MOD(extack, "no key in use: add one and use it first");
		return -ENOKEY;
	}
	WRITE_ONCE(in->auth_mode, mode);
	return 0;
}

/*
 * GET_INSTANCE: the mode, the key in use and, for a netns admin (@admin),
 * each key's id and fingerprint; not for others, who could test guesses
 * of a weak key against a fingerprint. RTNL.
 */
int ics_key_put(struct sk_buff *skb, struct ics_net *in, bool admin)
{
	struct nlattr *nest, *one;
	struct ics_key *k;
	int i;

	ASSERT_RTNL();
	if (nla_put_u8(skb, ICS_A_AUTH_MODE, in->auth_mode) ||
	    nla_put_u8(skb, ICS_A_KEY_TX, in->key_tx))
		return -EMSGSIZE;
	if (!admin)
		return 0;
	nest = nla_nest_start(skb, ICS_A_KEYS);
	if (!nest)
		return -EMSGSIZE;
	for (i = 0; i < ICS_KEYS_MAX; i++) {
		k = rtnl_dereference(in->keys[i]);
		if (!k)
			continue;
		one = nla_nest_start(skb, ICS_KEY_A_KEY);
		if (!one || nla_put_u8(skb, ICS_KEY_A_ID, k->id) ||
		    nla_put(skb, ICS_KEY_A_FINGERPRINT, sizeof(k->fpr), k->fpr))
			return -EMSGSIZE;
		nla_nest_end(skb, one);
	}
	nla_nest_end(skb, nest);
	return 0;
}

/*
 * Netns exit, last: unbound (synchronize_net() done), genl gone for this
 * netns, no heartbeat left to sign, so no reader; every key goes, wiped,
 * without a grace period (ics_key_del() waits for one).
 */
void ics_key_exit(struct ics_net *in)
{
	int i;

	WARN_ON_ONCE(rcu_access_pointer(in->bind));
	for (i = 0; i < ICS_KEYS_MAX; i++)
		kfree_sensitive(rcu_dereference_protected(in->keys[i], true));
	WARN_ON_ONCE(rcu_access_pointer(in->txk));	/* ics_unbind() cleared it */
}
