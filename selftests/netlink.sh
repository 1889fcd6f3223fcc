#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# netlink.sh - the generic netlink family "ics" seen by clients other than
# icstat: the kernel's YNL CLI (tools/net/ynl/cli.py driven by
# Documentation/netlink/specs/ics.yaml) must read exactly what icstat -j
# reports (channels, nodes, links, instance); the family the kernel
# registers must be the spec's (version, commands, attributes: no test
# machinery, which is the test service's family now, its numbers reserved);
# and malformed requests from a raw netlink socket, retired numbers among
# them, must fail with an error and change nothing.
#
#   netns ics$$-a                       netns ics$$-b
#   +----------------------+            +----------------------+
#   | ics node 1   veth0   +----veth----+   veth0   ics node 2 |
#   +----------------------+            +----------------------+
#   node 1 sends a mix on several channels; both are read three ways.

. "$(dirname "$0")/lib.sh"

: "${ICS_YNL_DIR:=$ICS_TOP/build/ksft/tools/net/ynl}"
SPEC=$ICS_TOP/Documentation/netlink/specs/ics.yaml
SCHEMA=$ICS_YNL_DIR/../../../Documentation/netlink/genetlink.yaml

ics_init
[ -r "$ICS_YNL_DIR/cli.py" ] || ics_skip_all "YNL cli.py not found in $ICS_YNL_DIR (scripts/ksft-extract.sh)"
ktap_set_plan 8

ynl() { in_ns "$1" python3 "$ICS_YNL_DIR/cli.py" --spec "$SPEC" --no-schema --output-json "${@:2}"; }

setup()
{
	pair_setup || return 1
	ics_send "$NS_A" 1 2 CFS 300 7 && ics_send "$NS_A" 1 2 DRD 70000 2 &&
		ics_send "$NS_A" 1 2 DLM 0 3 && ics_send "$NS_B" 2 1 KCH 4096 5 || return 1
	ics_wait_rx "$NS_B" 2 12 60 && ics_wait_rx "$NS_A" 1 5 60
}

schema_valid()
{
	in_ns "$NS_A" python3 "$ICS_YNL_DIR/cli.py" --spec "$SPEC" --schema "$SCHEMA" \
		--list-ops >/dev/null
}

# The family the kernel registered (the controller's CTRL_CMD_GETFAMILY) is
# the spec's: its version, its commands with do/dump and permission, the
# top-level attributes (maxattr) and multicast groups. The test machinery
# left it: command 7 (send-test) is not registered, its number reserved.
family_matches()
{
	in_ns "$NS_A" python3 - "$SPEC" "$ICS_YNL_DIR" <<'PY'
import socket, struct, sys
sys.path.insert(0, sys.argv[2])
from lib import SpecFamily

spec = SpecFamily(sys.argv[1], "")
NETLINK_GENERIC, GENL_ID_CTRL, CTRL_CMD_GETFAMILY = 16, 0x10, 3
A_NAME, A_VERSION, A_MAXATTR, A_OPS, A_MCGRPS = 2, 3, 5, 6, 7
GENL_ADMIN_PERM, GENL_CMD_CAP_DO, GENL_CMD_CAP_DUMP, GENL_UNS_ADMIN_PERM = 1, 2, 4, 0x10

def attrs(buf):
    off, out = 0, {}
    while off + 4 <= len(buf):
        ln, t = struct.unpack_from("HH", buf, off)
        out.setdefault(t & 0x3fff, []).append(buf[off + 4:off + ln])
        off += (ln + 3) & ~3
    return out

s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_GENERIC)
name = b"ics\0"
a = struct.pack("HH", 4 + len(name), A_NAME) + name
body = struct.pack("BBH", CTRL_CMD_GETFAMILY, 1, 0) + a
s.send(struct.pack("IHHII", 16 + len(body), GENL_ID_CTRL, 1, 1, 0) + body)
buf = s.recv(65536)
ln, typ = struct.unpack_from("IH", buf)
if typ != GENL_ID_CTRL:
    sys.exit("# FAIL: CTRL_CMD_GETFAMILY ics: reply type %d (error %d)"
             % (typ, -struct.unpack_from("i", buf, 16)[0]))
fam = attrs(buf[20:ln])
u32 = lambda b: struct.unpack("I", b[:4])[0]
errs = []
def eq(what, kernel, want):
    if kernel != want:
        errs.append(f"{what}: kernel {kernel!r}, spec {want!r}")

eq("version", u32(fam[A_VERSION][0]), spec.yaml.get("version", 1))
eq("maxattr", u32(fam[A_MAXATTR][0]), max(spec.attr_sets["ics"].attrs_by_val))
kops = {}
for op in attrs(fam[A_OPS][0]).values():
    o = attrs(op[0])
    f = u32(o[2][0])
    kops[u32(o[1][0])] = ("do" if f & GENL_CMD_CAP_DO else "") + \
        ("dump" if f & GENL_CMD_CAP_DUMP else "") + \
        (" admin" if f & (GENL_ADMIN_PERM | GENL_UNS_ADMIN_PERM) else "")
sops = {}
for op in spec.ops.values():
    if "do" in op.yaml or "dump" in op.yaml:
        sops[op.req_value] = ("do" if "do" in op.yaml else "") + \
            ("dump" if "dump" in op.yaml else "") + \
            (" admin" if "admin-perm" in op.yaml.get("flags", []) else "")
for c in sorted(set(kops) | set(sops)):
    eq(f"command {c}", kops.get(c, "none"), sops.get(c, "none"))
groups = sorted(attrs(g[0])[1][0].rstrip(b"\0").decode()
                for g in attrs(fam.get(A_MCGRPS, [b""])[0]).values())
eq("multicast groups", groups, sorted(g["name"] for g in spec.yaml["mcast-groups"]["list"]))
print("# family ics: version %d, maxattr %d, commands %s"
      % (u32(fam[A_VERSION][0]), u32(fam[A_MAXATTR][0]),
         ", ".join("%d %s" % kv for kv in sorted(kops.items()))))
for e in errs:
    print("# FAIL: " + e)
sys.exit(1 if errs else 0)
PY
}

# compare NS: cli.py dumps and doit vs icstat -j, field by field.
compare()
{
	local ns=$1
	ynl "$ns" --dump get-channels > "$ICS_TMP/y-chan" &&
	ynl "$ns" --dump get-nodes > "$ICS_TMP/y-nodes" &&
	ynl "$ns" --do get-instance > "$ICS_TMP/y-inst" &&
	ynl "$ns" --dump get-links > "$ICS_TMP/y-links" &&
	in_ns "$ns" icstat -j links > "$ICS_TMP/i-links" &&
	in_ns "$ns" icstat -j chanhisttot > "$ICS_TMP/i-chan" &&
	in_ns "$ns" icstat -j nodes > "$ICS_TMP/i-nodes" &&
	in_ns "$ns" icstat -j show > "$ICS_TMP/i-show" || { fail "a reader failed"; return 1; }
	python3 - "$ICS_TMP" <<'PY'
import json, sys
d = sys.argv[1]
L = lambda n: json.load(open(f"{d}/{n}"))
yc, yn, yi, yl = L("y-chan"), L("y-nodes"), L("y-inst"), L("y-links")
ic, inn, ish, il = L("i-chan"), L("i-nodes"), L("i-show"), L("i-links")
names = [c["name"] for c in ic["channels"]]
errs = []
def eq(what, a, b):
    if a != b:
        errs.append(f"{what}: ynl {a!r} != icstat {b!r}")
yc = [m["channel"] for m in yc]
eq("channel count", len(yc), 16)
for y, i in zip(yc, ic["channels"]):
    n = i["name"]
    eq(f"{n} id", y["id"], i["id"])
    eq(f"{n} name", y["name"], n)
    eq(f"{n} handler", bool(y["handler"]), i["handler"])
    eq(f"{n} rx-unclaimed", y["rx-unclaimed"], i["rx_unclaimed"])
    eq(f"{n} attribute count", len(y), len(i))
    for dr in ("tx", "rx"):
        eq(f"{n} {dr} msgs", y[dr]["msgs"], i[dr]["msgs"])
        eq(f"{n} {dr} bytes", y[dr]["bytes"], i[dr]["bytes"])
        eq(f"{n} {dr} hist", y[dr]["hist"], i[dr]["hist"])
yn = {m["node"]["id"]: m["node"] for m in yn}
inn = {n["node_id"]: n for n in inn["nodes"]}
eq("node ids", sorted(yn), sorted(inn))
for k in yn:
    for f in ("tx-msgs", "tx-bytes", "rx-msgs", "rx-bytes"):
        eq(f"node {k} {f}", yn[k][f], inn[k][f.replace("-", "_")])
    eq(f"node {k} reachable", bool(yn[k]["reachable"]), inn[k]["reachable"])
    eq(f"node {k} attribute count", len(yn[k]), len(inn[k]))
yl = {m["link"]["node"]: m["link"] for m in yl}
il = {l["node"]: l for l in il["links"]}
eq("link peers", sorted(yl), sorted(il))
for k in yl:
    for f, v in yl[k].items():
        want = il[k].get(f.replace("-", "_"))
        if f == "queue":
            want = [want[n] for n in names]
        eq(f"link {k} {f}", v, want)
    eq(f"link {k} attribute count", len(yl[k]), len(il[k]))
if not any(l["tx_frames"] for l in il.values()):
    errs.append("no link counted a data frame: the link comparison proves nothing")
eq("state", yi["state"], ish["state"])
for y, i in (("node-id", "node_id"), ("cluster-id", "cluster_id"), ("ifname", "ifname"),
             ("mtu", "mtu"), ("msg-max", "msg_max"), ("heartbeat-ms", "heartbeat_ms"),
             ("heartbeat-misses", "heartbeat_misses"), ("generation", "generation"),
             ("reasm-mem-max", "reasm_mem_max")):
    eq(y, yi[y], ish[i])
for k, v in yi["stats"].items():
    eq(f"stat {k}", v, ish["stats"][k.replace("-", "_")])
eq("stat count", len(yi["stats"]), len(ish["stats"]))
tx = sum(c["tx"]["msgs"] for c in ic["channels"])
if tx == 0:
    errs.append("no traffic counted: the comparison proves nothing")
for e in errs[:30]:
    print("# FAIL: " + e)
sys.exit(1 if errs else 0)
PY
}

# Raw requests the tools would never send. Each must fail with the listed
# errno, and the instance of a fresh netns must stay unused.
malformed()
{
	local ns=$ICS_PFX-m
	ns_add "$ns" || return 1
	ip -n "$ns" link add m0 type veth peer name m1 && ip -n "$ns" link set m0 up || return 1
	in_ns "$ns" python3 - <<'PY' || return 1
import errno, socket, struct, sys

NETLINK_GENERIC, SOL_NETLINK, NETLINK_EXT_ACK = 16, 270, 11
NLM_F_REQUEST, NLM_F_ACK, NLM_F_DUMP = 1, 4, 0x300
s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_GENERIC)
s.bind((0, 0))
s.setsockopt(SOL_NETLINK, NETLINK_EXT_ACK, 1)
seq = 0

def nla(t, p):
    n = 4 + len(p)
    return struct.pack("HH", n, t) + p + b"\0" * (-n % 4)

def request(fam, cmd, attrs=b"", flags=NLM_F_REQUEST | NLM_F_ACK, ver=1, resv=0, raw=None):
    global seq
    seq += 1
    body = raw if raw is not None else struct.pack("BBH", cmd, ver, resv) + attrs
    s.send(struct.pack("IHHII", 16 + len(body), fam, flags, seq, 0) + body)
    while True:
        buf = s.recv(65536)
        off = 0
        while off < len(buf):
            ln, typ = struct.unpack_from("IH", buf, off)
            if typ == 2:  # NLMSG_ERROR
                return -struct.unpack_from("i", buf, off + 16)[0], buf[off + 16:off + ln]
            if typ == 3:  # NLMSG_DONE
                return 0, b""
            if typ == fam or fam == 0x10:
                reply = buf[off + 20:off + ln]
                if fam == 0x10:
                    return 0, reply
            off += (ln + 3) & ~3

# Resolve the family through the controller.
rc, reply = request(0x10, 3, nla(2, b"ics\0"), flags=NLM_F_REQUEST)
assert rc == 0, f"CTRL_CMD_GETFAMILY ics: {rc}"
off, fam = 0, None
while off < len(reply):
    ln, t = struct.unpack_from("HH", reply, off)
    if t == 1:
        fam = struct.unpack_from("H", reply, off + 4)[0]
    off += (ln + 3) & ~3
assert fam, "no family id"

BIND, GET_INSTANCE, SET_CHANNEL = 2, 1, 9
RETIRED_CMD, RETIRED_ATTR = 7, 15  # were send-test and test-channel: reserved
A_STATE, A_IFNAME, A_NODE_ID = 2, 4, 6
u32 = lambda v: struct.pack("I", v)
cases = [
    ("reply-only attribute in a request", BIND, nla(A_STATE, b"\1") + nla(A_IFNAME, b"m0\0") + nla(A_NODE_ID, u32(1)), {}, errno.EINVAL),
    ("attribute type beyond the policy", BIND, nla(200, u32(1)) + nla(A_IFNAME, b"m0\0") + nla(A_NODE_ID, u32(1)), {}, errno.EINVAL),
    ("node id of 1 byte", BIND, nla(A_IFNAME, b"m0\0") + nla(A_NODE_ID, b"\1"), {}, errno.EINVAL),
    ("ifname without its NUL", BIND, nla(A_IFNAME, b"m0") + nla(A_NODE_ID, u32(1)), {}, errno.EINVAL),
    ("ifname longer than IFNAMSIZ", BIND, nla(A_IFNAME, b"x" * 40 + b"\0") + nla(A_NODE_ID, u32(1)), {}, errno.EINVAL),
    ("attribute length past the message", BIND, struct.pack("HH", 64, A_NODE_ID) + u32(1), {}, errno.EINVAL),
    ("no node id", BIND, nla(A_IFNAME, b"m0\0"), {}, errno.EINVAL),
    ("both ifname and ifindex", BIND, nla(3, u32(1)) + nla(A_IFNAME, b"m0\0") + nla(A_NODE_ID, u32(1)), {}, errno.EINVAL),
    ("node id 65", BIND, nla(A_IFNAME, b"m0\0") + nla(A_NODE_ID, u32(65)), {}, errno.EINVAL),
    ("non-zero genl reserved field", GET_INSTANCE, b"", {"resv": 1}, errno.EINVAL),
    ("unknown command", 99, b"", {}, errno.EOPNOTSUPP),
    ("set-channel without attributes", SET_CHANNEL, b"", {}, errno.EINVAL),
    ("retired command 7 (send-test)", RETIRED_CMD, b"", {}, errno.EOPNOTSUPP),
    ("retired attribute 15 (test-channel) in a request", BIND, nla(RETIRED_ATTR, u32(14)) + nla(A_IFNAME, b"m0\0") + nla(A_NODE_ID, u32(1)), {}, errno.EINVAL),
    ("genl header cut short", None, b"", {"raw": b"\x02\x01"}, errno.EINVAL),
]
bad = 0
for name, cmd, attrs, kw, want in cases:
    rc, _ = request(fam, cmd or 0, attrs, **kw)
    ok = rc == want
    bad += not ok
    print(f"#   {name}: {errno.errorcode.get(rc, rc)} ({'ok' if ok else 'want ' + errno.errorcode[want]})")
sys.exit(1 if bad else 0)
PY
	assert_eq "state after malformed requests" unused \
		"$(in_ns "$ns" icsctl show -j | jget 'j["state"]')"
}

# Configuration belongs to the network namespace's administrators:
# CAP_NET_ADMIN over the user namespace that owns it. The root of a user
# namespace with a network namespace of its own binds, sets and unbinds
# its instance; in a namespace it does not own (node 1's), it may not.
userns_admin()
{
	local out
	command -v unshare >/dev/null || { echo "# unshare not installed"; return 4; }
	[ -e /proc/self/ns/user ] ||
		{ echo "# no user namespaces in this kernel (CONFIG_USER_NS)"; return 4; }
	out=$(unshare -Urn sh -c "ip link add u0 type veth peer name u1 && ip link set u0 up &&
		icsctl bind dev u0 node 7 && icsctl set heartbeat 250 &&
		icsctl show -j > $ICS_TMP/userns.json && icsctl unbind" 2>&1) ||
		{ fail "as root of its own user and network namespaces: $out"; return 1; }
	assert_eq "its instance, as it saw it" "bound 7 250" \
		"$(jget '"%s %d %d" % (j["state"], j["node_id"], j["heartbeat_ms"])' < "$ICS_TMP/userns.json")" ||
		return 1
	expect_err 1 'icsctl: set: Operation not permitted \(need CAP_NET_ADMIN\)' \
		in_ns "$NS_A" unshare -Ur icsctl set heartbeat 250
}

setup || ics_bail "setup failed"
ics_case "the YNL spec validates against the kernel's genetlink schema" schema_valid
ics_case "the family the kernel registers is the spec's: version, commands, attributes, groups" family_matches
ics_case "node 1: YNL reads exactly what icstat -j reports" compare "$NS_A"
ics_case "node 2: YNL reads exactly what icstat -j reports" compare "$NS_B"
ics_case "malformed requests fail with their errno and change nothing" malformed
ics_case "a user namespace's root configures the instance of its own network namespace" userns_admin
ics_case "no frame was dropped as malformed on either member" bash -c \
	"[ \"\$(ip netns exec $NS_A icstat -j show | python3 -c 'import json,sys; s=json.load(sys.stdin)[\"stats\"]; print(sum(v for k,v in s.items() if k.startswith(\"rx_bad\")))')\" = 0 ]"
ics_case "teardown: netns deleted, module removed, kernel log clean" ics_teardown_check
ktap_finished
