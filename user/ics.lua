-- SPDX-License-Identifier: GPL-2.0
--
-- Wireshark dissector for ics, ethertype 0x88B5, wire version 8
-- (Documentation/wire-format.rst; include/uapi/linux/ics.h has the structs).
-- Every header field, the flags, the HELLO and ACK payloads, bundles and the
-- authentication fields; the CRC32C is verified, and a frame ics.ko would
-- drop as malformed is flagged (expert info, group "Malformed").
-- Install: make -C user install (Wireshark's global Lua plugin directory),
-- or tshark -X lua_script:ics.lua.

local ICS_VERSION = 8
local HDR_LEN = 84
local HELLO_LEN = 176
local ACK_LEN = 80

local ics = Proto("ics", "ics internode communication")

local type_names = { [1] = "DATA", [2] = "HELLO", [3] = "ACK", [4] = "RESET" }
local chan_names = {
	[0] = "BOOT", "PRI0", "PRI1", "CFS", "NET", "CLSM", "DRD", "TUNL", "CLUA",
	"KEVM", "CFSR", "RBLD", "KCH", "DLM", "TEST", "CNX",
}
local F_ACKREQ, F_BUNDLE = 0x08, 0x80
local HELLO_REPLY, HELLO_LEAVING = 0x01, 0x02

local f = ics.fields
f.version = ProtoField.uint8("ics.version", "Version")
f.type = ProtoField.uint8("ics.type", "Type", base.DEC, type_names)
f.flags = ProtoField.uint8("ics.flags", "Flags", base.HEX)
f.ackreq = ProtoField.bool("ics.flags.ackreq", "ACKREQ", 8, nil, F_ACKREQ)
f.bundle = ProtoField.bool("ics.flags.bundle", "BUNDLE", 8, nil, F_BUNDLE)
f.channel = ProtoField.uint8("ics.channel", "Channel", base.DEC, chan_names)
f.cluster = ProtoField.uint32("ics.cluster_id", "Cluster id")
f.src = ProtoField.uint8("ics.src_node", "Source node")
f.dst = ProtoField.uint8("ics.dst_node", "Destination node")
f.frag_len = ProtoField.uint16("ics.frag_len", "Fragment length")
f.sess = ProtoField.uint32("ics.sess", "Session", base.HEX)
f.seq = ProtoField.uint32("ics.seq", "Sequence number")
f.ack_sess = ProtoField.uint32("ics.ack_sess", "Acknowledged session", base.HEX)
f.ack = ProtoField.uint32("ics.ack", "Acknowledgement")
f.msg_id = ProtoField.uint32("ics.msg_id", "Message id")
f.msg_len = ProtoField.uint32("ics.msg_len", "Message length")
f.frag_off = ProtoField.uint32("ics.frag_off", "Fragment offset")
f.incarnation = ProtoField.uint32("ics.incarnation", "Incarnation")
f.check = ProtoField.uint32("ics.check", "CRC32C", base.HEX)
f.check_status = ProtoField.string("ics.check.status", "CRC32C status")
f.dst_inc = ProtoField.uint32("ics.dst_inc", "Destination incarnation")
f.key_id = ProtoField.uint8("ics.key_id", "Key id")
f.auth_flags = ProtoField.uint8("ics.auth_flags", "Authentication flags", base.HEX)
f.ctr = ProtoField.uint64("ics.ctr", "Counter")
f.salt = ProtoField.bytes("ics.salt", "Salt")
f.tag = ProtoField.bytes("ics.tag", "Tag")
f.payload = ProtoField.bytes("ics.payload", "Payload")

f.rec = ProtoField.bytes("ics.bundle.record", "Bundled message")
f.rec_len = ProtoField.uint16("ics.bundle.len", "Length")
f.rec_flags = ProtoField.uint8("ics.bundle.flags", "Flags", base.HEX)
f.rec_msg_id = ProtoField.uint32("ics.bundle.msg_id", "Message id")

f.h_inc = ProtoField.uint32("ics.hello.incarnation", "Incarnation")
f.h_mtu = ProtoField.uint32("ics.hello.mtu", "MTU")
f.h_ms = ProtoField.uint32("ics.hello.hello_ms", "Heartbeat interval (ms)")
f.h_flags = ProtoField.uint32("ics.hello.flags", "Flags", base.HEX)
f.h_reply = ProtoField.bool("ics.hello.flags.reply", "REPLY", 32, nil, HELLO_REPLY)
f.h_leaving = ProtoField.bool("ics.hello.flags.leaving", "LEAVING", 32, nil, HELLO_LEAVING)
f.h_seq = ProtoField.uint32("ics.hello.seq", "Heartbeat number")
f.h_ts = ProtoField.uint32("ics.hello.ts_us", "Timestamp (us)")
f.h_seen = ProtoField.uint64("ics.hello.seen", "Nodes heard", base.HEX)
f.h_votes = ProtoField.uint8("ics.hello.votes", "Votes")
f.h_paused = ProtoField.uint16("ics.hello.paused", "Paused channels", base.HEX)
f.h_pause_gen = ProtoField.uint16("ics.hello.pause_gen", "Pause generation")
f.h_nonce = ProtoField.uint32("ics.hello.nonce", "Nonce", base.HEX)
f.h_echo = ProtoField.bytes("ics.hello.echo", "Echo")
f.h_echo_node = ProtoField.uint8("ics.hello.echo.node", "Node")
f.h_echo_ts = ProtoField.uint32("ics.hello.echo.ts_us", "Its timestamp (us)")
f.h_echo_held = ProtoField.uint32("ics.hello.echo.held_us", "Held (us)")
f.h_echo_nonce = ProtoField.uint32("ics.hello.echo.nonce", "Its nonce", base.HEX)

f.a_window = ProtoField.uint16("ics.ack.window", "Window")
f.a_sack_bits = ProtoField.uint16("ics.ack.sack_bits", "SACK bits")
f.a_paused = ProtoField.uint16("ics.ack.paused", "Paused channels", base.HEX)
f.a_pause_gen = ProtoField.uint16("ics.ack.pause_gen", "Pause generation")
f.a_held = ProtoField.uint16("ics.ack.held", "Held channels", base.HEX)
f.a_told = ProtoField.uint16("ics.ack.told", "Told channels", base.HEX)
f.a_flags = ProtoField.uint8("ics.ack.flags", "Flags", base.HEX)
f.a_busy = ProtoField.bool("ics.ack.flags.busy", "BUSY", 8, nil, 0x01)
f.a_sack = ProtoField.bytes("ics.ack.sack", "SACK")
f.a_sacked = ProtoField.uint16("ics.ack.sacked", "Frames held past the gap")
f.a_taken = ProtoField.uint32("ics.ack.taken", "Taken")

local e_bad_check = ProtoExpert.new("ics.check.bad", "CRC32C does not match",
	expert.group.CHECKSUM, expert.severity.ERROR)
local e_malformed = ProtoExpert.new("ics.malformed", "Malformed ics frame",
	expert.group.MALFORMED, expert.severity.ERROR)
ics.experts = { e_bad_check, e_malformed }

local eth_src = Field.new("eth.src")

-- CRC32C (Castagnoli), reflected, table-driven; bit32 is Lua 5.2's.
local crc_table = {}
for i = 0, 255 do
	local c = i
	for _ = 1, 8 do
		if bit32.band(c, 1) ~= 0 then
			c = bit32.bxor(bit32.rshift(c, 1), 0x82F63B78)
		else
			c = bit32.rshift(c, 1)
		end
	end
	crc_table[i] = c
end

local function crc32c_update(crc, bytes, from, to)
	for i = from, to do
		local b = bytes:get_index(i)
		crc = bit32.bxor(crc_table[bit32.band(bit32.bxor(crc, b), 0xff)], bit32.rshift(crc, 8))
	end
	return crc
end

-- The frame's CRC32C: source MAC, header with check as 0, the payload.
local function frame_crc(src, tvb, frag_len)
	local crc = crc32c_update(0xFFFFFFFF, src, 0, src:len() - 1)
	local hdr = tvb:range(0, HDR_LEN):bytes()
	hdr:set_index(44, 0)
	hdr:set_index(45, 0)
	hdr:set_index(46, 0)
	hdr:set_index(47, 0)
	crc = crc32c_update(crc, hdr, 0, HDR_LEN - 1)
	if frag_len > 0 then
		crc = crc32c_update(crc, tvb:range(HDR_LEN, frag_len):bytes(), 0, frag_len - 1)
	end
	return bit32.bnot(crc)
end

local function popcount16(v)
	local n = 0
	while v ~= 0 do
		n = n + bit32.band(v, 1)
		v = bit32.rshift(v, 1)
	end
	return n
end

local function malformed(item, what)
	item:add_proto_expert_info(e_malformed, what)
end

local function dissect_hello(tvb, tree)
	local t = tree:add(tvb, "Heartbeat")
	if tvb:len() ~= HELLO_LEN then
		malformed(t, string.format("HELLO of %d bytes, not %d", tvb:len(), HELLO_LEN))
		return
	end
	t:add(f.h_inc, tvb(0, 4))
	t:add(f.h_mtu, tvb(4, 4))
	t:add(f.h_ms, tvb(8, 4))
	local fl = t:add(f.h_flags, tvb(12, 4))
	fl:add(f.h_reply, tvb(12, 4))
	fl:add(f.h_leaving, tvb(12, 4))
	if bit32.band(tvb(12, 4):uint(), bit32.bnot(HELLO_REPLY + HELLO_LEAVING)) ~= 0 then
		malformed(fl, "unknown heartbeat flags")
	end
	t:add(f.h_seq, tvb(16, 4))
	t:add(f.h_ts, tvb(20, 4))
	t:add(f.h_seen, tvb(24, 8))
	local v = t:add(f.h_votes, tvb(32, 1))
	if tvb(32, 1):uint() > 1 then
		malformed(v, "votes above 1")
	end
	t:add(f.h_paused, tvb(34, 2))
	t:add(f.h_pause_gen, tvb(36, 2))
	t:add(f.h_nonce, tvb(40, 4))
	for i = 0, 7 do
		local off = 44 + 16 * i
		if tvb(off, 1):uint() ~= 0 then
			local e = t:add(f.h_echo, tvb(off, 16))
			e:add(f.h_echo_node, tvb(off, 1))
			e:add(f.h_echo_ts, tvb(off + 4, 4))
			e:add(f.h_echo_held, tvb(off + 8, 4))
			e:add(f.h_echo_nonce, tvb(off + 12, 4))
		end
	end
end

local function dissect_ack(tvb, tree)
	local t = tree:add(tvb, "Acknowledgement")
	if tvb:len() < ACK_LEN then
		malformed(t, string.format("ACK of %d bytes, below %d", tvb:len(), ACK_LEN))
		return
	end
	t:add(f.a_window, tvb(0, 2))
	t:add(f.a_sack_bits, tvb(2, 2))
	t:add(f.a_paused, tvb(4, 2))
	t:add(f.a_pause_gen, tvb(6, 2))
	t:add(f.a_held, tvb(8, 2))
	t:add(f.a_told, tvb(10, 2))
	local fl = t:add(f.a_flags, tvb(12, 1))
	fl:add(f.a_busy, tvb(12, 1))
	local sack = tvb(16, 64)
	local st = t:add(f.a_sack, sack)
	local held = 0
	for i = 0, 63 do
		held = held + popcount16(sack(i, 1):uint())
	end
	st:add(f.a_sacked, sack, held)
	local taken = popcount16(bit32.bor(tvb(8, 2):uint(), tvb(10, 2):uint()))
	if tvb:len() ~= ACK_LEN + 4 * taken then
		malformed(t, string.format("ACK of %d bytes, not %d for %d taken entries",
			tvb:len(), ACK_LEN + 4 * taken, taken))
		return
	end
	for i = 0, taken - 1 do
		t:add(f.a_taken, tvb(ACK_LEN + 4 * i, 4))
	end
end

-- A bundle's records: tile the payload exactly, at least two, flags 0.
local function dissect_bundle(tvb, tree, msg_id)
	local off, n = 0, 0
	while off < tvb:len() do
		if tvb:len() - off < 4 then
			malformed(tree, "bundle: a record header cut short")
			return n
		end
		local len = tvb(off, 2):uint()
		if off + 4 + len > tvb:len() then
			malformed(tree, "bundle: a record past the payload")
			return n
		end
		local r = tree:add(f.rec, tvb(off, 4 + len))
		r:add(f.rec_len, tvb(off, 2))
		local fl = r:add(f.rec_flags, tvb(off + 2, 1))
		if tvb(off + 2, 2):uint() ~= 0 then
			malformed(fl, "bundle: record flags or reserved not 0")
		end
		r:add(f.rec_msg_id, tvb(off, 4), msg_id + n)
		r:append_text(string.format(" %u, %u bytes", msg_id + n, len))
		n = n + 1
		off = off + 4 + len
	end
	if n < 2 then
		malformed(tree, "bundle of fewer than two messages")
	end
	return n
end

function ics.dissector(tvb, pinfo, tree)
	pinfo.cols.protocol = "ICS"
	local t = tree:add(ics, tvb())
	if tvb:len() < HDR_LEN then
		malformed(t, string.format("%d bytes, shorter than the %d-byte header",
			tvb:len(), HDR_LEN))
		return
	end
	local version, typ, flags, chan = tvb(0, 1):uint(), tvb(1, 1):uint(), tvb(2, 1):uint(),
		tvb(3, 1):uint()
	local src, dst, frag_len = tvb(8, 1):uint(), tvb(9, 1):uint(), tvb(10, 2):uint()

	local vi = t:add(f.version, tvb(0, 1))
	if version ~= ICS_VERSION then
		malformed(vi, string.format("wire version %d, not %d", version, ICS_VERSION))
	end
	local ti = t:add(f.type, tvb(1, 1))
	if not type_names[typ] then
		malformed(ti, "unknown frame type")
	end
	local fi = t:add(f.flags, tvb(2, 1))
	fi:add(f.ackreq, tvb(2, 1))
	fi:add(f.bundle, tvb(2, 1))
	if bit32.band(flags, bit32.bnot(F_ACKREQ + F_BUNDLE)) ~= 0 or (flags ~= 0 and typ ~= 1) then
		malformed(fi, "unknown flags, or flags on a frame other than DATA")
	end
	local ci = t:add(f.channel, tvb(3, 1))
	if chan > 15 or (typ ~= 1 and chan ~= 15) then
		malformed(ci, "channel out of range, or not CNX on a HELLO, ACK or RESET")
	end
	t:add(f.cluster, tvb(4, 4))
	t:add(f.src, tvb(8, 1))
	t:add(f.dst, tvb(9, 1))
	local li = t:add(f.frag_len, tvb(10, 2))
	t:add(f.sess, tvb(12, 4))
	t:add(f.seq, tvb(16, 4))
	t:add(f.ack_sess, tvb(20, 4))
	t:add(f.ack, tvb(24, 4))
	t:add(f.msg_id, tvb(28, 4))
	t:add(f.msg_len, tvb(32, 4))
	t:add(f.frag_off, tvb(36, 4))
	t:add(f.incarnation, tvb(40, 4))
	local chk = t:add(f.check, tvb(44, 4))
	t:add(f.dst_inc, tvb(48, 4))
	t:add(f.key_id, tvb(52, 1))
	t:add(f.auth_flags, tvb(53, 1))
	local ctr = UInt64(tvb(56, 4):uint(), tvb(54, 2):uint())
	t:add(f.ctr, tvb(54, 6), ctr)
	t:add(f.salt, tvb(60, 8))
	t:add(f.tag, tvb(68, 16))

	if HDR_LEN + frag_len > tvb:len() then
		malformed(li, string.format("%d payload bytes, the frame has %d", frag_len,
			tvb:len() - HDR_LEN))
		return
	end
	local sf = eth_src()
	if sf then
		local want = frame_crc(sf.range:bytes(), tvb, frag_len)
		if want == tvb(44, 4):uint() then
			chk:add(f.check_status, "good"):set_generated()
		else
			chk:add(f.check_status, "bad"):set_generated()
			chk:add_proto_expert_info(e_bad_check,
				string.format("CRC32C 0x%08x, computed 0x%08x", tvb(44, 4):uint(), want))
		end
	end

	local info = string.format("%s %d → %d", type_names[typ] or ("type " .. typ), src, dst)
	local payload = frag_len > 0 and tvb(HDR_LEN, frag_len) or nil
	if typ ~= 1 and not payload and typ ~= 4 then
		malformed(li, "no payload")
	elseif typ == 1 then
		info = info .. string.format(" %s seq %u msg %u", chan_names[chan] or chan,
			tvb(16, 4):uint(), tvb(28, 4):uint())
		if bit32.band(flags, F_BUNDLE) ~= 0 and not payload then
			malformed(t, "bundle without a payload")
		elseif bit32.band(flags, F_BUNDLE) ~= 0 then
			if frag_len ~= tvb(32, 4):uint() or tvb(36, 4):uint() ~= 0 then
				malformed(t, "bundle: frag_len is not msg_len, or frag_off is not 0")
			end
			local n = dissect_bundle(payload:tvb(), t, tvb(28, 4):uint())
			info = info .. string.format(" (bundle of %d)", n)
		else
			info = info .. string.format(" len %u", tvb(32, 4):uint())
			if payload then
				t:add(f.payload, payload)
			end
		end
	elseif typ == 2 then
		dissect_hello(payload:tvb(), t)
		if frag_len == HELLO_LEN then
			local hf = payload(12, 4):uint()
			if bit32.band(hf, HELLO_LEAVING) ~= 0 then
				info = info .. " LEAVING"
			elseif bit32.band(hf, HELLO_REPLY) ~= 0 then
				info = info .. " REPLY"
			end
			info = info .. string.format(" hb %u", payload(16, 4):uint())
		end
	elseif typ == 3 then
		dissect_ack(payload:tvb(), t)
		info = info .. string.format(" ack %u", tvb(24, 4):uint())
	end
	if tvb(52, 1):uint() ~= 0 then
		info = info .. string.format(" [key %u]", tvb(52, 1):uint())
	end
	pinfo.cols.info = info
end

DissectorTable.get("ethertype"):add(0x88B5, ics)
